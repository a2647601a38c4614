import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { Message, NewMessage } from "../../src/domain/message.js";
import { openPostgresStore } from "../../src/store/postgres/index.js";
import type { Store } from "../../src/store/store.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { openPostgresTestStores } from "./adapters.js";
import { aMessage, anAccount, finishDelivered, NOW } from "./factories.js";

/**
 * The commit cadence on PostgreSQL (docs/postgres.md, "Group commit across nodes"): plain deliveries' outcomes ride
 * along with the next transaction instead of committing alone (write-batcher.ts, MergeableOp.lazy).
 */
const account = anAccount("acc-cadence", { token: "t-cadence" });

/** Runs `body` while another session holds `lock` (`<table> IN <mode>`) in an open transaction, then ends it. */
async function whileLocked(url: string, lock: string, body: (blocker: pg.Client) => Promise<void>): Promise<void> {
  const blocker = new pg.Client({ connectionString: url });
  await blocker.connect();
  try {
    await blocker.query("BEGIN");
    await blocker.query(`LOCK TABLE ${lock}`);
    await body(blocker);
  } finally {
    await blocker.query("ROLLBACK").catch(() => {});
    await blocker.end();
  }
}
const message = (over: Partial<NewMessage> = {}): NewMessage =>
  aMessage(account.id, { body: Buffer.from("b"), ...over });

describe.runIf(postgresAvailable())("PostgreSQL commit cadence: lazy outcomes", () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await dispose?.();
    dispose = undefined;
  });

  const publish = (store: Store, m: NewMessage, leased = false) =>
    store.messageInsertMany({
      items: [{ message: m, ...(leased ? { leaseOwner: "node-a", leaseUntil: NOW + 60_000 } : {}) }],
      now: NOW,
      dedupWindowMs: 0,
    });
  const delivered = (store: Store, m: Message) => finishDelivered(store, m, "node-a", NOW + 1);

  it("a plain delivery's outcome waits for the next transaction and commits in it", async () => {
    // A lazy wait far longer than the test: the outcome can only commit by riding along with other work.
    const opened = await openPostgresTestStores({ postgres: { lazyWaitMs: 60_000 } });
    dispose = opened.dispose;
    const { store, sql } = opened;
    await store.accountInsert({ account });
    const [leased] = await publish(store, message(), true);
    expect(leased!.message!.state).toBe("ACTIVE");

    let finished = false;
    const finish = delivered(store, leased!.message!).then((applied) => {
      finished = true;
      return applied;
    });
    // Several turns of the event loop and a read round trip later it has not committed on its own.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    await sql("SELECT 1");
    expect(finished).toBe(false);
    const [still] = await sql<{ state: string }>("SELECT state FROM messages WHERE id = $1", [leased!.message!.id]);
    expect(still!.state).toBe("ACTIVE");

    // The next publish starts a transaction: the outcome commits in it (same transaction id on both rows).
    const next = message();
    await publish(store, next);
    expect(await finish).toBe(true);
    const rows = await sql<{ id: string; state: string; xmin: string }>(
      "SELECT id, state, xmin::text AS xmin FROM messages WHERE id = ANY($1::text[])",
      [[leased!.message!.id, next.id]],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(leased!.message!.id)!.state).toBe("DELIVERED");
    expect(byId.get(leased!.message!.id)!.xmin).toBe(byId.get(next.id)!.xmin);
  });

  it("waits longer for a ride when the node's publish runs come rarely (three nodes share the publishes)", async () => {
    // A floor of 1 ms: only the adaptation to the runs' interval can make the outcome wait for the next publish.
    const opened = await openPostgresTestStores({ postgres: { lazyWaitMs: 1 } });
    dispose = opened.dispose;
    const { store, sql } = opened;
    await store.accountInsert({ account });
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // Publish runs about every 40 ms: the outcomes' wait grows to 1.5 × that, at most 50 ms.
    for (let i = 0; i < 15; i++) {
      await publish(store, message());
      await sleep(40);
    }
    const [leased] = await publish(store, message(), true);
    const finish = delivered(store, leased!.message!);
    await sleep(10);
    const next = message();
    await publish(store, next);
    expect(await finish).toBe(true);
    const rows = await sql<{ id: string; xmin: string }>(
      "SELECT id, xmin::text AS xmin FROM messages WHERE id = ANY($1::text[])",
      [[leased!.message!.id, next.id]],
    );
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(1);
  });

  it("does not wait when its account's max_global_parallelism is nearly used up", async () => {
    // The free plan allows 10 deliveries in flight: a lazy outcome would keep the account's next deliveries waiting.
    const opened = await openPostgresTestStores({ postgres: { lazyWaitMs: 60_000 } });
    dispose = opened.dispose;
    const { store, sql } = opened;
    const free = anAccount("acc-cadence-free", { token: "t-cadence-free", plan: "free" });
    await store.accountInsert({ account: free });
    const [leased] = await publish(store, aMessage(free.id, { body: Buffer.from("b") }), true);
    expect(leased!.message!.state).toBe("ACTIVE");
    expect(await delivered(store, leased!.message!)).toBe(true); // alone: no other work to ride along with
    const [row] = await sql<{ state: string }>("SELECT state FROM messages WHERE id = $1", [leased!.message!.id]);
    expect(row!.state).toBe("DELIVERED");
  });

  it("an outcome that waits alone commits once its wait is over, and at close", async () => {
    const opened = await openPostgresTestStores({ postgres: { lazyWaitMs: 5 } });
    dispose = opened.dispose;
    const { store, sql } = opened;
    await store.accountInsert({ account });
    const [a] = await publish(store, message(), true);
    expect(await delivered(store, a!.message!)).toBe(true);
    const [row] = await sql<{ state: string }>("SELECT state FROM messages WHERE id = $1", [a!.message!.id]);
    expect(row!.state).toBe("DELIVERED");

    // A long wait does not hold up close(): what waits is committed before the pool ends.
    const slow = openPostgresStore({ connectionString: opened.url, poolSize: 4, lazyWaitMs: 60_000 });
    const [b] = await publish(slow, message(), true);
    const finish = delivered(slow, b!.message!);
    await new Promise((resolve) => setImmediate(resolve));
    await slow.close();
    expect(await finish).toBe(true);
    const [after] = await sql<{ state: string }>("SELECT state FROM messages WHERE id = $1", [b!.message!.id]);
    expect(after!.state).toBe("DELIVERED");
  });

  it("a busy node's next publish run waits to gather as many publishes as it last had (gatherMs)", async () => {
    const opened = await openPostgresTestStores({ postgres: { gatherMs: 10_000 } });
    dispose = opened.dispose;
    const { store, sql } = opened;
    await store.accountInsert({ account });
    // A run of three publishes that takes about a second: another connection holds the usage table, which its
    // flush writes. The node now counts as busy (its run held more than one publish), its runs as long.
    await whileLocked(opened.url, "usage IN SHARE ROW EXCLUSIVE MODE", async (blocker) => {
      const first = Promise.all([publish(store, message()), publish(store, message()), publish(store, message())]);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await blocker.query("COMMIT");
      await first;
    });

    // Three publishes, each in its own event-loop turn: without gathering the first would commit at once, alone.
    const [a, b, c] = [message(), message(), message()];
    let aDone = false;
    const pa = publish(store, a).then(() => {
      aDone = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    const pb = publish(store, b);
    await new Promise((resolve) => setImmediate(resolve));
    await sql("SELECT 1"); // a round trip: time enough for a run of its own to commit
    expect(aDone).toBe(false);
    const pc = publish(store, c);
    await Promise.all([pa, pb, pc]);
    const rows = await sql<{ xmin: string }>("SELECT xmin::text AS xmin FROM messages WHERE id = ANY($1::text[])", [
      [a.id, b.id, c.id],
    ]);
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(1);
  });

  it("a batch without log entries leaves the logs table alone (plain messages' rows derive theirs)", async () => {
    const opened = await openPostgresTestStores();
    dispose = opened.dispose;
    const { store, sql } = opened;
    await store.accountInsert({ account });
    // Another session holds `logs` exclusively: a statement that so much as opens it waits.
    await whileLocked(opened.url, "logs IN ACCESS EXCLUSIVE MODE", async () => {
      const [leased] = await publish(store, message(), true);
      expect(leased!.message!.state).toBe("ACTIVE");
      expect(await delivered(store, leased!.message!)).toBe(true);
      const [row] = await sql<{ state: string; n: number }>(
        "SELECT state, (SELECT count(*)::int FROM usage) AS n FROM messages WHERE id = $1",
        [leased!.message!.id],
      );
      expect(row!.state).toBe("DELIVERED");
      expect(row!.n).toBeGreaterThan(0); // the usage counters were written
    });
  }, 20_000);
});
