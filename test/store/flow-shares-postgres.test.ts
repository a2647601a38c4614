import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FlowControl, Message } from "../../src/domain/message.js";
import type { Store } from "../../src/store/store.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { openPostgresTestStores } from "./adapters.js";
import { aKeyedMessage, anAccount, NOW as T0 } from "./factories.js";

/**
 * Several nodes on one PostgreSQL database without queueing on one row per account (migrations 066 and 067,
 * docs/postgres.md "Shares of the global bound"): each node's publishes start deliveries from its own share of the
 * account's max_global_parallelism, usage counters are per writing connection, and the bound stays exact.
 * A raw connection stands in for another node's transaction held open at the worst moment.
 */
const LEASE = 60_000;

describe.runIf(postgresAvailable())("several nodes on PostgreSQL: shares of the bound, usage per writer", () => {
  let db: Awaited<ReturnType<typeof openPostgresTestStores>>;
  let store: Store;
  let raw: pg.Pool;
  const sql = async <R = Record<string, unknown>>(text: string, values: unknown[] = []) =>
    (await raw.query(text, values)).rows as R[];

  beforeEach(async () => {
    db = await openPostgresTestStores();
    store = db.store;
    raw = new pg.Pool({ connectionString: db.url, max: 4 });
    raw.on("error", () => {});
    raw.on("connect", (client) => client.on("error", () => {}));
    await store.accountInsert({ account: anAccount("acc-paid", { plan: "paid" }) });
    // max_global_parallelism 500: shares of 1/32 (15) at a time, granted while half the bound stays free.
    await store.accountInsert({ account: anAccount("acc-500", { plan: "msgsvc_fixed_10m" }) });
  });
  afterEach(async () => {
    await raw.end();
    await db.dispose();
  });

  const insert = (into: Store, n: number, accountId: string, now: number, leaseOwner?: string, fc?: FlowControl) =>
    into.messageInsertMany({
      items: Array.from({ length: n }, () =>
        leaseOwner
          ? { message: aKeyedMessage(accountId, now, fc), leaseOwner, leaseUntil: now + LEASE }
          : { message: aKeyedMessage(accountId, now, fc) },
      ),
      now,
      dedupWindowMs: 0,
    });
  const claim = (from: Store, owner: string, now: number, limit = 1000) =>
    from.messageLeaseDue({ now, limit, owner, leaseUntil: now + LEASE });
  const active = async (accountId: string) =>
    (await sql<{ n: number }>("SELECT count(*)::int AS n FROM messages WHERE state = 'ACTIVE' AND account_id = $1", [
      accountId,
    ]))[0]!.n;
  const shares = (accountId: string) =>
    sql<{ node: string; size: number; bound: number }>(
      "SELECT node, size::int, bound::int FROM flow_shares WHERE account_id = $1 ORDER BY node",
      [accountId],
    );

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

  async function settledWithin<T>(p: Promise<T>, ms: number): Promise<boolean> {
    let settled = false;
    void p.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((r) => setTimeout(r, ms));
    return settled;
  }

  it("a node's publishes start on the fast path while another node's run holds the account's row and its share", async () => {
    const other = await db.more();
    const [a] = await insert(store, 1, "acc-paid", T0, "node-a");
    const [b] = await insert(other, 1, "acc-paid", T0, "node-b");
    expect([a!.message?.state, b!.message?.state]).toEqual(["ACTIVE", "ACTIVE"]);
    expect((await shares("acc-paid")).map((s) => s.node)).toEqual(["node-a", "node-b"]);
    // Node A's publish run in flight holds what it takes: its share; a claim of any node holds the account's row.
    const held = await openTransaction();
    await held.query("SELECT 1 FROM flow_accounts WHERE account_id = 'acc-paid' FOR UPDATE");
    await held.query("SELECT 1 FROM flow_shares WHERE account_id = 'acc-paid' AND node = 'node-a' FOR UPDATE");
    const publish = insert(other, 3, "acc-paid", T0 + 1, "node-b");
    // Before migration 067 it waited 50 ms for the account's row, then sent the messages through the claim.
    expect(await settledWithin(publish, 300)).toBe(true);
    expect((await publish).map((r) => r.message?.state)).toEqual(["ACTIVE", "ACTIVE", "ACTIVE"]);
    await held.end("ROLLBACK");
    const [nodeB] = (await shares("acc-paid")).filter((s) => s.node === "node-b");
    expect(nodeB).toMatchObject({ bound: 4 });
  });

  it("a publish run takes its node's free share without a subtransaction: one transaction id per run (migration 070)", async () => {
    await insert(store, 1, "acc-paid", T0, "node-a"); // grants node A its share
    expect((await shares("acc-paid")).map((s) => s.node)).toEqual(["node-a"]);
    const xid = async () => Number((await sql<{ x: string }>("SELECT txid_current()::text AS x"))[0]!.x);
    const before = await xid();
    const run = await insert(store, 2, "acc-paid", T0 + 1, "node-a");
    expect(run.map((r) => r.message?.state)).toEqual(["ACTIVE", "ACTIVE"]);
    // This read, the publish run and the next read: an id each. Locking the share inside a subtransaction (the
    // bounded wait's BEGIN … EXCEPTION block) took one more.
    expect((await xid()) - before).toBe(2);
    expect((await shares("acc-paid"))[0]).toMatchObject({ node: "node-a", bound: 3 });
  });

  it("usage counters of two nodes' transactions in flight at once do not wait for each other, and sum exactly", async () => {
    const minute = T0 - (T0 % 60_000);
    // Another node's transaction added its publishes' usage and has not committed yet.
    const held = await openTransaction();
    await held.query(
      `INSERT INTO usage (account_id, minute, metric, count, bytes, writer)
       VALUES ('acc-paid', $1, 'requests', 5, 50, pg_backend_pid())`,
      [minute],
    );
    const publish = insert(store, 2, "acc-paid", T0, "node-a");
    expect(await settledWithin(publish, 300)).toBe(true);
    await publish;
    await held.end("COMMIT");
    await insert(store, 1, "acc-paid", T0 + 1, "node-a");
    const buckets = await store.usageBuckets({ accountId: "acc-paid", from: minute, stepMs: 60_000, count: 1 });
    expect(buckets.find((b) => b.metric === "requests")?.count).toBe(8);
  });

  it("the bound holds exactly across a node's share, its own claim and another node's claim", async () => {
    const other = await db.more();
    const fast = await insert(store, 10, "acc-500", T0, "node-a");
    expect(fast.every((r) => r.message?.state === "ACTIVE")).toBe(true);
    // Its 10 deliveries in flight plus one chunk (500 / 32).
    expect(await shares("acc-500")).toEqual([{ node: "node-a", size: 25, bound: 10 }]);
    await insert(store, 480, "acc-500", T0);
    // Node A's claim starts 5 and counts them against its share...
    expect(await claim(store, "node-a", T0 + 1, 5)).toHaveLength(5);
    expect(await shares("acc-500")).toEqual([{ node: "node-a", size: 25, bound: 15 }]);
    // ...node B's claim leaves the share's 10 unused slots to node A: 15 + 10 + 475 = 500.
    expect(await claim(other, "node-b", T0 + 1)).toHaveLength(475);
    expect(await active("acc-500")).toBe(490);
    // Node A's share has 10 slots left: of 11 publishes, 10 start and one goes through the claim.
    const last = await insert(store, 11, "acc-500", T0 + 2, "node-a");
    expect(last.filter((r) => r.message?.state === "ACTIVE")).toHaveLength(10);
    expect(await active("acc-500")).toBe(500);
    expect(await store.flowGlobalActive({ accountId: "acc-500" })).toBe(500);
    // Near the bound a node keeps no share: the exact count decides, under the account's row.
    expect(await shares("acc-500")).toEqual([]);
    expect(await claim(other, "node-b", T0 + 3)).toEqual([]);
  });

  it("a node that stops gives its share back: 2 s after its last use any claim takes it", async () => {
    const other = await db.more();
    await insert(store, 10, "acc-500", T0, "node-a"); // node A's share: 25, of which 15 unused
    await insert(store, 490, "acc-500", T0);
    expect(await claim(other, "node-b", T0 + 1)).toHaveLength(475);
    expect(await active("acc-500")).toBe(485);
    // Node A is gone (its 10 deliveries still count until their leases are rescued); its share lapses 2 s after its
    // last use, and the next look at the account's wait list (here its first re-check) starts the 15 it held back.
    expect(await claim(other, "node-b", T0 + 2001)).toHaveLength(15);
    expect(await active("acc-500")).toBe(500);
    expect(await shares("acc-500")).toEqual([]);
  });

  it("two nodes publishing, claiming and finishing at once never pass the bound", async () => {
    const other = await db.more();
    const nodes: [Store, string][] = [
      [store, "node-a"],
      [other, "node-b"],
    ];
    let sampling = true;
    let dbMax = 0;
    let sawShares = false;
    const sampler = (async () => {
      while (sampling) {
        dbMax = Math.max(dbMax, await active("acc-500"));
        sawShares ||= (await shares("acc-500")).length > 0;
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const finishAll = async (node: Store, ms: Message[]) => {
      await new Promise((r) => setTimeout(r, Math.random() * 10));
      for (const m of ms) {
        await node.messageFinish({
          message: m,
          owner: m.leaseOwner!,
          now: Date.now(),
          outcome: { kind: "delivered" },
          logs: [],
          newMessages: [],
        });
      }
    };
    const pending: Promise<void>[] = [];
    const run = async ([node, owner]: [Store, string]) => {
      for (let round = 0; round < 40; round++) {
        const published = await insert(node, 40, "acc-500", Date.now(), owner);
        const started = published.flatMap((r) => (r.message?.state === "ACTIVE" ? [r.message] : []));
        started.push(...(await claim(node, owner, Date.now(), 60)));
        // Half the deliveries finish soon, the rest stay in flight: the account fills up to its bound.
        if (round % 2 === 0) pending.push(finishAll(node, started));
      }
    };
    await Promise.all(nodes.map(run));
    await Promise.all(pending);
    sampling = false;
    await sampler;
    expect(sawShares).toBe(true);
    expect(dbMax).toBeLessThanOrEqual(500);
    expect(await active("acc-500")).toBeLessThanOrEqual(500);
    expect(dbMax).toBeGreaterThan(400);
  }, 60_000);
});
