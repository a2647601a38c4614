import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FlowControl, Message } from "../../src/domain/message.js";
import type { Store } from "../../src/store/store.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { openPostgresTestStores } from "./adapters.js";
import { account, message, T0 } from "./flow-fixtures.js";

/**
 * Flow control with several nodes on one PostgreSQL database: stores with their own pools claiming at once, and the
 * row-lock protocol of src/store/postgres/flow-control.ts checked step by step, with a raw connection standing in
 * for another node's transaction held open at the worst moment.
 */
const LEASE = 60_000;

describe.runIf(postgresAvailable())("flow control on PostgreSQL: several nodes, row locks", () => {
  let db: Awaited<ReturnType<typeof openPostgresTestStores>>;
  let store: Store;
  let raw: pg.Pool;
  const sql = async <R = Record<string, unknown>>(text: string, values: unknown[] = []) =>
    (await raw.query(text, values)).rows as R[];

  beforeEach(async () => {
    db = await openPostgresTestStores();
    store = db.store;
    raw = new pg.Pool({ connectionString: db.url, max: 4 });
    // pool.end() resolves before its sockets are closed; dropping the database then cuts them on purpose.
    raw.on("error", () => {});
    raw.on("connect", (client) => client.on("error", () => {}));
    await store.accountInsert({ account: account("acc-paid", "paid") });
    await store.accountInsert({ account: account("acc-free", "free") });
  });
  afterEach(async () => {
    await raw.end();
    await db.dispose();
  });

  const insert = (into: Store, n: number, accountId: string, now: number, fc?: FlowControl, leaseOwner?: string) =>
    into.messageInsertMany({
      items: Array.from({ length: n }, () =>
        leaseOwner
          ? { message: message(accountId, now, fc), leaseOwner, leaseUntil: now + LEASE }
          : { message: message(accountId, now, fc) },
      ),
      now,
      dedupWindowMs: 0,
    });
  const claim = (from: Store, owner: string, now: number, limit = 100) =>
    from.messageLeaseDue({ now, limit, owner, leaseUntil: now + LEASE });
  const finish = (on: Store, m: Message, now: number) =>
    on.messageFinish({
      message: m,
      owner: m.leaseOwner!,
      now,
      outcome: { kind: "delivered" },
      logs: [],
      newMessages: [],
    });

  /** Another node's transaction, held open until the test ends it. */
  async function openTransaction() {
    const client = await raw.connect();
    await client.query("BEGIN");
    return {
      query: async (text: string, values: unknown[] = []) => (await client.query(text, values)).rows,
      end: async (how: "COMMIT" | "ROLLBACK") => {
        await client.query(how);
        client.release();
      },
    };
  }

  /** Resolves the promise's state after giving it time to run up to a lock: a pending one is waiting. */
  async function settledWithin<T>(p: Promise<T>, ms: number): Promise<boolean> {
    let settled = false;
    void p.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((r) => setTimeout(r, ms));
    return settled;
  }

  it("a publish to an existing key never waits for a claim that moved the key's window (no deadlock with it)", async () => {
    const fc: FlowControl = { key: "busy", rate: 5, periodSec: 1 };
    await insert(store, 1, "acc-paid", T0, fc);
    // Another node's claim, still open: it moved the window and set wake_at, a non-HOT update (wake_at is indexed),
    // so a unique check on the key would wait for it. That claim may itself wait for a lock the publish's batch
    // holds (the account's flow row, from the fast path of another message): the deadlock this rules out.
    const claim = await openTransaction();
    await claim.query(
      "UPDATE flow_keys SET rate_count = rate_count + 1, period_start = $1, wake_at = $2 WHERE key = 'busy'",
      [T0, T0 + 1000],
    );
    const publish = insert(store, 1, "acc-paid", T0 + 1, fc);
    expect(await settledWithin(publish, 300)).toBe(true);
    await claim.end("COMMIT");
    expect(await publish).toHaveLength(1);
  });

  it("two nodes claiming and finishing at once never exceed a key's parallelism nor the global bound", async () => {
    const other = await db.more();
    const nodes = [store, other];
    const keys = ["k0", "k1", "k2", "k3", "k4"];
    // The free plan allows 10 in flight: five keys of parallelism 3 would allow 15, so both bounds bind.
    const now = () => Date.now();
    const expected = new Set<string>();
    for (const key of keys) {
      const fc = { key, parallelism: 3, periodSec: 1 };
      for (const r of await insert(nodes[keys.indexOf(key) % 2]!, 30, "acc-free", now(), fc)) {
        expected.add(r.messageId);
      }
    }

    const inFlight = new Map<string, Set<string>>(); // key ("" for unkeyed) -> ids claimed and not yet finishing
    let maxPerKey = 0;
    let maxAccount = 0;
    const delivered: string[] = [];
    const track = (m: Message) => {
      const key = m.spec.flowControl?.key ?? "";
      const set = inFlight.get(key) ?? new Set<string>();
      set.add(m.id);
      inFlight.set(key, set);
      if (key !== "") maxPerKey = Math.max(maxPerKey, set.size);
      maxAccount = Math.max(maxAccount, [...inFlight.values()].reduce((n, s) => n + s.size, 0));
    };
    const deliver = async (node: Store, m: Message) => {
      await new Promise((r) => setTimeout(r, Math.random() * 8));
      inFlight.get(m.spec.flowControl?.key ?? "")!.delete(m.id); // from here on it may leave ACTIVE
      expect(await finish(node, m, now())).toBe(true);
      delivered.push(m.id);
    };

    // What the database itself says, sampled while it runs.
    let sampling = true;
    let dbMaxPerKey = 0;
    let dbMaxAccount = 0;
    const sampler = (async () => {
      while (sampling) {
        const rows = await sql<{ flow_key: string | null; n: number }>(
          "SELECT flow_key, count(*)::int AS n FROM messages WHERE state = 'ACTIVE' GROUP BY flow_key",
        );
        for (const r of rows) if (r.flow_key !== null) dbMaxPerKey = Math.max(dbMaxPerKey, r.n);
        dbMaxAccount = Math.max(dbMaxAccount, rows.reduce((n, r) => n + r.n, 0));
        await new Promise((r) => setTimeout(r, 3));
      }
    })();

    const pending: Promise<void>[] = [];
    const run = async (node: Store, owner: string) => {
      for (let round = 0; round < 5000 && delivered.length < expected.size; round++) {
        // Unkeyed publishes on the fast path compete for the same global bound.
        if (round % 10 === 0 && round < 200) {
          for (const r of await insert(node, 1, "acc-free", now(), undefined, owner)) {
            expected.add(r.messageId);
            if (r.message?.leaseOwner !== undefined) {
              track(r.message);
              pending.push(deliver(node, r.message));
            }
          }
        }
        const got = await claim(node, owner, now(), 4);
        for (const m of got) {
          track(m);
          pending.push(deliver(node, m));
        }
        if (got.length === 0) await new Promise((r) => setTimeout(r, 2));
      }
    };
    await Promise.all([run(store, "node-a"), run(other, "node-b")]);
    await Promise.all(pending);
    sampling = false;
    await sampler;

    expect(maxPerKey).toBeLessThanOrEqual(3);
    expect(maxAccount).toBeLessThanOrEqual(10);
    expect(dbMaxPerKey).toBeLessThanOrEqual(3);
    expect(dbMaxAccount).toBeLessThanOrEqual(10);
    expect(maxPerKey).toBe(3); // the bounds were reached, not merely respected
    expect(dbMaxAccount).toBeGreaterThan(3);
    expect(delivered.length).toBe(expected.size);
    expect(new Set(delivered)).toEqual(expected);
  }, 60_000);

  it("a claim waits for another node's claim of the same key and counts the delivery it started", async () => {
    const fc = { key: "k", parallelism: 1, periodSec: 1 };
    const [first, second] = await insert(store, 2, "acc-paid", T0, fc);
    await sql("INSERT INTO flow_accounts (account_id) VALUES ('acc-paid') ON CONFLICT DO NOTHING");
    // Another node claims `first`: it holds the account's and the key's rows until it commits.
    const node = await openTransaction();
    await node.query("SELECT 1 FROM flow_accounts WHERE account_id = 'acc-paid' FOR UPDATE");
    await node.query("SELECT 1 FROM flow_keys WHERE account_id = 'acc-paid' AND key = 'k' FOR UPDATE");
    await node.query("UPDATE messages SET state = 'ACTIVE', lease_owner = 'node-x', lease_until = $2 WHERE id = $1", [
      first!.messageId,
      T0 + LEASE,
    ]);
    const claimed = claim(store, "node-a", T0);
    expect(await settledWithin(claimed, 300)).toBe(false);
    await node.end("COMMIT");
    // Counted after the other node committed: the key is full, `second` waits.
    expect(await claimed).toEqual([]);
    expect(await store.flowKeyGet({ accountId: "acc-paid", key: "k" })).toMatchObject({
      parallelismCount: 1,
      waitListSize: 1,
    });
    expect((await store.messageGet({ accountId: "acc-paid", id: second!.messageId }))?.state).toBe("WAITING");
  });

  it("the publish fast path does not wait long for a busy account: the message goes through the claim", async () => {
    await sql("INSERT INTO flow_accounts (account_id) VALUES ('acc-free') ON CONFLICT DO NOTHING");
    const node = await openTransaction();
    await node.query("SELECT 1 FROM flow_accounts WHERE account_id = 'acc-free' FOR UPDATE");
    const [busy] = await insert(store, 1, "acc-free", T0, undefined, "node-a");
    expect(busy!.message).toMatchObject({ state: "CREATED" });
    expect(busy!.message?.leaseOwner).toBeUndefined();
    await node.end("ROLLBACK");
    const [free] = await insert(store, 1, "acc-free", T0, undefined, "node-a");
    expect(free!.message).toMatchObject({ state: "ACTIVE", leaseOwner: "node-a" });
    expect((await claim(store, "node-b", T0)).map((m) => m.id)).toEqual([busy!.messageId]);
  });

  it("but a holder that commits within the bound (migration 021) leaves the fast path to the waiting publish", async () => {
    await sql("INSERT INTO flow_accounts (account_id) VALUES ('acc-free') ON CONFLICT DO NOTHING");
    // A bound long enough that the test cannot outrun it; new connections (a new node) read it.
    const name = (await sql<{ name: string }>("SELECT current_database() AS name"))[0]!.name;
    await sql(`ALTER DATABASE "${name}" SET ferry.fast_path_lock_wait = '60s'`);
    const patient = await db.more();
    const node = await openTransaction();
    await node.query("SELECT 1 FROM flow_accounts WHERE account_id = 'acc-free' FOR UPDATE");
    const publish = insert(patient, 1, "acc-free", T0, undefined, "node-a");
    // The publish waits for the row: seen as a backend waiting on a lock (bounded poll).
    for (let i = 0; i < 200; i++) {
      const waiting = await sql("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [name]);
      if (waiting.length > 0) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await node.end("COMMIT");
    const [started] = await publish;
    expect(started!.message).toMatchObject({ state: "ACTIVE", leaseOwner: "node-a" });
  });

  it("nor for an account whose row another batch has just updated (its own fast path, a claim)", async () => {
    await sql("INSERT INTO flow_accounts (account_id) VALUES ('acc-free') ON CONFLICT DO NOTHING");
    const node = await openTransaction();
    // A new row version, not committed yet: the unique check of an INSERT would wait for it.
    await node.query("UPDATE flow_accounts SET active_bound = 1 WHERE account_id = 'acc-free'");
    const publish = insert(store, 1, "acc-free", T0, undefined, "node-a");
    expect(await settledWithin(publish, 300)).toBe(true);
    const [busy] = await publish;
    expect(busy!.message?.leaseOwner).toBeUndefined();
    await node.end("COMMIT");
    expect((await claim(store, "node-b", T0)).map((m) => m.id)).toEqual([busy!.messageId]);
  });

  it("the fast path's bound of deliveries in flight errs high only, and a claim resets it", async () => {
    // The free plan allows 10 in flight; all 10 start on the fast path, counted by the bound alone.
    const fast = await insert(store, 10, "acc-free", T0, undefined, "node-a");
    expect(fast.every((r) => r.message?.state === "ACTIVE")).toBe(true);
    const bound = async () => {
      const text = "SELECT active_bound::int AS b FROM flow_accounts WHERE account_id = 'acc-free'";
      return (await sql<{ b: number | null }>(text))[0]!.b;
    };
    expect(await bound()).toBe(10);
    // Finishes do not lower it (that would lock the row in every finish): the fast path gives way...
    for (const r of fast.slice(0, 5)) await finish(store, r.message as Message, T0 + 1);
    const [held] = await insert(store, 1, "acc-free", T0 + 1, undefined, "node-a");
    expect(held!.message?.state).toBe("CREATED");
    // ...to the claim, which counts the rows (5 in flight), starts it, and leaves the bound unknown.
    expect((await claim(store, "node-b", T0 + 1)).map((m) => m.id)).toEqual([held!.messageId]);
    expect(await bound()).toBeNull();
    const [next] = await insert(store, 1, "acc-free", T0 + 1, undefined, "node-a");
    expect(next!.message?.state).toBe("ACTIVE");
    expect(await bound()).toBe(7);
    expect(await store.flowGlobalActive({ accountId: "acc-free" })).toBe(7);
  });

  it("a finish waits for a claim holding its key and wakes the messages that claim parked", async () => {
    const fc = { key: "k", parallelism: 1, periodSec: 1 };
    const [first] = await insert(store, 1, "acc-paid", T0, fc);
    const [running] = await claim(store, "node-a", T0);
    expect(running?.id).toBe(first!.messageId);
    const [second] = await insert(store, 1, "acc-paid", T0 + 1, fc);
    // Another node's claim counted `first` as still running and parks `second`; it has not committed yet.
    const node = await openTransaction();
    await node.query("SELECT 1 FROM flow_accounts WHERE account_id = 'acc-paid' FOR UPDATE");
    await node.query("SELECT 1 FROM flow_keys WHERE account_id = 'acc-paid' AND key = 'k' FOR UPDATE");
    await node.query("UPDATE messages SET state = 'WAITING', wait_reason = 'key' WHERE id = $1", [second!.messageId]);
    await node.query("UPDATE flow_keys SET wake_at = $1 WHERE account_id = 'acc-paid' AND key = 'k'", [T0 + 10_002]);
    const finished = finish(store, running!, T0 + 2);
    expect(await settledWithin(finished, 300)).toBe(false);
    await node.end("COMMIT");
    expect(await finished).toBe(true);
    // The finish saw the parked message after that claim committed: the key is due at once (0), not in 10 s.
    const [key] = await sql<{ wake_at: number }>("SELECT wake_at FROM flow_keys WHERE key = 'k'");
    expect(Number(key!.wake_at)).toBe(0);
    expect((await claim(store, "node-b", T0 + 2)).map((m) => m.id)).toEqual([second!.messageId]);
  });

  it("parks for the global bound with a short first re-check, then finishes wake the wait list at once", async () => {
    await insert(store, 11, "acc-free", T0);
    const started = await claim(store, "node-a", T0);
    expect(started).toHaveLength(10);
    const wake = async () =>
      Number((await sql<{ wake_at: string }>("SELECT wake_at FROM flow_accounts WHERE account_id = 'acc-free'"))[0]!
        .wake_at);
    // The first park: a finish racing with it could not have seen it, so the account is looked at again soon.
    expect(await wake()).toBe(T0 + 1000);
    expect(await claim(store, "node-b", T0 + 1000)).toEqual([]);
    expect(await wake()).toBe(T0 + 11_000);
    await finish(store, started[0]!, T0 + 1001);
    expect(await wake()).toBe(0);
    expect(await claim(store, "node-b", T0 + 1001)).toHaveLength(1);
    expect(await store.flowGlobalActive({ accountId: "acc-free" })).toBe(10);
  });
});
