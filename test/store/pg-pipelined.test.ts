import { afterEach, describe, expect, it } from "vitest";
import type { Message, NewMessage } from "../../src/domain/message.js";
import { openPostgresStore } from "../../src/store/postgres/index.js";
import type { Store } from "../../src/store/store.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { pgTurnCounter } from "../helpers/pg-turns.js";
import { openPostgresTestStores } from "./adapters.js";
import { aMessage, anAccount, finishDelivered, NOW } from "./factories.js";

/**
 * One round trip per write transaction on PostgreSQL (docs/postgres.md, "One round trip per transaction"): a
 * batch's statements go out with its COMMIT, the publish fast path's room is checked server-side instead of read
 * first, and when a premise no longer holds the batch runs again reading first.
 */
const account = anAccount("acc-pipelined", { token: "t-pipelined" });
const message = (over: Partial<NewMessage> = {}): NewMessage =>
  aMessage(account.id, { body: Buffer.from("b"), ...over });
const publish = (store: Store, messages: NewMessage[], leased = true) =>
  store.messageInsertMany({
    items: messages.map((m) => ({ message: m, ...(leased ? { leaseOwner: "node-a", leaseUntil: NOW + 60_000 } : {}) })),
    now: NOW,
    dedupWindowMs: 0,
  });
const delivered = (store: Store, m: Message) => finishDelivered(store, m, "node-a", NOW + 1);

describe.runIf(postgresAvailable())("PostgreSQL pipelined write transactions", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A database with the account, and a store on it whose every connection goes through a turn counter. */
  const open = async (onAccount = account) => {
    const opened = await openPostgresTestStores();
    cleanups.push(opened.dispose);
    await opened.store.accountInsert({ account: onAccount });
    const relay = await pgTurnCounter(opened.url);
    cleanups.push(() => relay.close());
    const store = openPostgresStore({ connectionString: relay.url, poolSize: 4 });
    cleanups.push(() => store.close());
    return { ...opened, store, relay };
  };

  it("a publish run, with the outcomes riding along, is one round trip and ONE statement, without BEGIN and COMMIT", async () => {
    const { store, relay, sql } = await open();
    // The first run reads the account's room (nothing known yet); its connections get their statements prepared.
    const [first] = await publish(store, [message()]);
    expect(first!.message!.state).toBe("ACTIVE");
    await publish(store, [message()]);

    relay.reset();
    const [second] = await publish(store, [message(), message()]);
    expect(second!.message!.state).toBe("ACTIVE");
    expect(relay.turns()).toBe(1);
    // The fast path's check, the INSERT and the flush composed into one statement (compose.ts).
    expect(relay.statements()).toBe(1);

    // A publish and a plain delivery's outcome of one tick share the transaction, still in one round trip and one
    // statement.
    relay.reset();
    const [next, answer] = await Promise.all([publish(store, [message()]), delivered(store, second!.message!)]);
    expect(answer).toBe(true);
    expect(relay.turns()).toBe(1);
    expect(relay.statements()).toBe(1);
    const rows = await sql<{ id: string; state: string; xmin: string }>(
      "SELECT id, state, xmin::text AS xmin FROM messages WHERE id = ANY($1::text[])",
      [[second!.message!.id, next[0]!.messageId]],
    );
    expect(rows.map((r) => r.state).sort()).toEqual(["ACTIVE", "DELIVERED"]);
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(1);
  });

  it("a run with a statement that must be answered first sends BEGIN, what was held, and COMMIT: one transaction", async () => {
    const { store, relay, sql } = await open();
    await publish(store, [message()]);
    await publish(store, [message()]);

    // A flow-control key's settings are written with a statement whose answer the insert reads (flow-keys.ts).
    relay.reset();
    const keyed = message({ spec: { ...message().spec, flowControl: { key: "k-held", parallelism: 5, periodSec: 1 } } });
    const [plain, withKey] = await Promise.all([publish(store, [message()]), publish(store, [keyed])]);
    expect(plain![0]!.message!.state).toBe("ACTIVE");
    expect(withKey![0]!.messageId).toMatch(/^msg/);
    expect(relay.statements()).toBeGreaterThan(3); // BEGIN, the statements one by one, COMMIT
    const rows = await sql<{ xmin: string }>("SELECT xmin::text AS xmin FROM messages WHERE id = ANY($1::text[])", [
      [plain![0]!.messageId, withKey![0]!.messageId],
    ]);
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(1);
  });

  it("a run holding the finishes of two lease owners ends both in one statement, each row with its owner", async () => {
    const { store, relay, sql } = await open();
    const [ofA] = await publish(store, [message()]);
    const [ofB] = await store.messageInsertMany({
      items: [{ message: message(), leaseOwner: "node-b", leaseUntil: NOW + 60_000 }],
      now: NOW,
      dedupWindowMs: 0,
    });
    expect(ofB!.message!.state).toBe("ACTIVE");

    relay.reset();
    const answers = await Promise.all([
      delivered(store, ofA!.message!),
      finishDelivered(store, ofB!.message!, "node-b", NOW + 1),
    ]);
    expect(answers).toEqual([true, true]);
    // The write relay's leader finishes the deliveries of every node: one composed statement, not one per owner.
    expect(relay.statements()).toBe(1);
    const rows = await sql<{ state: string; xmin: string }>(
      "SELECT state, xmin::text AS xmin FROM messages WHERE id = ANY($1::text[])",
      [[ofA!.messageId, ofB!.messageId]],
    );
    expect(rows.map((r) => r.state)).toEqual(["DELIVERED", "DELIVERED"]);
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(1);
  });

  it("a run holding the finishes of a message's lost lease and of its new one ends only the new one", async () => {
    const { store, sql } = await open();
    const [ofA] = await publish(store, [message()]);
    // A's lease was rescued and the message leased again to B (its rescuer and claim, as other nodes do).
    await sql("UPDATE messages SET lease_owner = 'node-b' WHERE id = $1", [ofA!.messageId]);
    const before = await sql<{ n: string }>(
      "SELECT coalesce(sum(count), 0)::text AS n FROM usage WHERE metric = 'delivered'",
    );
    // The write relay's leader may hold both outcomes in one run: B's ends the row, A's finds its lease gone.
    const answers = await Promise.all([
      delivered(store, ofA!.message!),
      finishDelivered(store, ofA!.message!, "node-b", NOW + 1),
    ]);
    expect(answers).toEqual([false, true]);
    const after = await sql<{ n: string }>(
      "SELECT coalesce(sum(count), 0)::text AS n FROM usage WHERE metric = 'delivered'",
    );
    expect(Number(after[0]!.n) - Number(before[0]!.n)).toBe(1);
    const [row] = await sql<{ state: string }>("SELECT state FROM messages WHERE id = $1", [ofA!.messageId]);
    expect(row!.state).toBe("DELIVERED");
  });

  it("when the account's room is gone since it was read, the run commits nothing and runs again reading it", async () => {
    // A bound of 200 (no node takes a share of it: docs/postgres.md "Shares of the global bound"), so every start
    // is counted on the account's row, as other nodes' starts are.
    const small = anAccount("acc-pipelined-200", { token: "t-pipelined-200", plan: "msgsvc_fixed_1m" });
    const message = () => aMessage(small.id, { body: Buffer.from("b") });
    const { store, relay, sql } = await open(small);
    await publish(store, [message()]); // reads the room: 200 deliveries in flight, nearly free
    // Other nodes' fast paths took all but one of the slots meanwhile.
    await sql("UPDATE flow_accounts SET active_bound = 199 WHERE account_id = $1", [small.id]);

    relay.reset();
    const results = await publish(store, [message(), message()]);
    // Exactly as the gate that reads first decides: one more start fits, the other message waits for a claim.
    expect(results.map((r) => r.message!.state)).toEqual(["ACTIVE", "CREATED"]);
    const stored = await sql<{ state: string }>("SELECT state FROM messages WHERE id = ANY($1::text[]) ORDER BY seq", [
      results.map((r) => r.messageId),
    ]);
    expect(stored.map((r) => r.state)).toEqual(["ACTIVE", "CREATED"]);
    // The guess cost a transaction that was rolled back (one round trip), then the ordinary run: read the room,
    // insert, commit.
    expect(relay.turns()).toBe(4);

    // Now known to be short of room, the next run reads the room first (no guess, nothing rolled back), and sends
    // the INSERT with the COMMIT: two round trips.
    relay.reset();
    const [third] = await publish(store, [message()]);
    expect(third!.message!.state).toBe("CREATED");
    expect(relay.turns()).toBe(2);
  });

  it("a lost lease among pipelined outcomes fails the guess; the batch runs again and only that one answers false", async () => {
    const { store, sql } = await open();
    const leased = (await publish(store, [message(), message(), message()])).map((r) => r.message!);
    // Another node's rescuer took the second one over meanwhile.
    await sql("UPDATE messages SET lease_owner = 'node-b' WHERE id = $1", [leased[1]!.id]);
    const answers = await Promise.all(leased.map((m) => delivered(store, m)));
    expect(answers).toEqual([true, false, true]);
    const rows = await sql<{ id: string; state: string }>("SELECT id, state FROM messages WHERE id = ANY($1::text[])", [
      leased.map((m) => m.id),
    ]);
    const byId = new Map(rows.map((r) => [r.id, r.state]));
    expect(leased.map((m) => byId.get(m.id))).toEqual(["DELIVERED", "ACTIVE", "DELIVERED"]);
    const usage = await sql<{ count: string }>(
      "SELECT sum(count)::text AS count FROM usage WHERE account_id = $1 AND metric = 'delivered'",
      [account.id],
    );
    expect(Number(usage[0]!.count)).toBe(2); // the rolled-back guess counted nothing
  });
});
