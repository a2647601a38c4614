import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { openPostgresTestStores } from "./adapters.js";
import { account, message, MIN, schedule, T, tick } from "./schedule-fixtures.js";

describe.runIf(postgresAvailable())("schedule store: several PostgreSQL nodes on one database", () => {
  let a: Store;
  let b: Store;
  let url: string;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    const opened = await openPostgresTestStores();
    a = opened.store;
    b = await opened.more();
    url = opened.url;
    dispose = opened.dispose;
    await a.accountInsert({ account: account("acc") });
  });
  afterEach(async () => {
    await dispose();
  });

  it("fires each tick once when two nodes claim every due schedule at once, in opposite orders", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `s${String(i).padStart(2, "0")}`);
    for (const id of ids) await a.scheduleUpsert({ schedule: schedule(id), maxSchedules: 100 });
    const fired = new Map<string, string[]>();
    // Each node plans from its own read, then claims; one node in reverse order, so group commit puts the two
    // nodes' claims into their transactions in opposite orders (where plain row waits could deadlock).
    const node = async (store: Store, name: string, reverse: boolean) => {
      const due = await store.scheduleListDue({ now: T + MIN, limit: 100 });
      if (reverse) due.reverse();
      await Promise.all(
        due.map(async (s) => {
          if (await store.scheduleFire({ ...tick(s.id, s.revision), messages: [message(s.id)] })) {
            fired.set(s.id, [...(fired.get(s.id) ?? []), name]);
          }
        }),
      );
    };
    await Promise.all([node(a, "A", false), node(b, "B", true)]);
    // Every tick fired, each once: a claim that lost (or skipped a row being claimed) inserted nothing.
    expect([...fired.keys()].sort()).toEqual(ids);
    for (const [, by] of fired) expect(by).toHaveLength(1);
    const schedules = await b.scheduleList({ accountId: "acc" });
    const messageIds = schedules.flatMap((s) => s.lastMessageIds);
    expect(messageIds).toHaveLength(ids.length);
    const leased = await a.messageLeaseDue({ now: T + MIN, limit: 1000, owner: "X", leaseUntil: T + 2 * MIN });
    expect(leased.map((m) => m.id).sort()).toEqual([...messageIds].sort());
    expect(schedules.every((s) => s.nextRunAt === T + 2 * MIN)).toBe(true);
  });

  it("does not wait for a schedule row another transaction holds; the tick stays due and fires after", async () => {
    await a.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 });
    const revision = (await a.scheduleGet({ accountId: "acc", id: "s1" }))!.revision;
    // Another node's transaction (a claim, a pause, an overwrite) holding the row.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT 1 FROM schedules WHERE account_id = 'acc' AND id = 's1' FOR UPDATE");
      expect(await b.scheduleFire({ ...tick("s1", revision), messages: [message("s1")] })).toBe(false);
      // It rolls back: nothing was claimed, the tick is still due and the next pass fires it.
      await other.query("ROLLBACK");
    } finally {
      await other.end();
    }
    expect((await b.scheduleListDue({ now: T + MIN, limit: 10 })).map((s) => s.id)).toEqual(["s1"]);
    const m = message("s1");
    expect(await b.scheduleFire({ ...tick("s1", revision), messages: [m] })).toBe(true);
    expect(await a.messageGet({ accountId: "acc", id: m.id })).toBeDefined();
  });

  it("keeps max_schedules across nodes creating at the same moment", async () => {
    const creates = Array.from({ length: 12 }, (_, i) =>
      (i % 2 === 0 ? a : b).scheduleUpsert({ schedule: schedule(`c${i}`), maxSchedules: 5 }),
    );
    const results = await Promise.all(creates);
    expect(results.filter((r) => r === "created")).toHaveLength(5);
    expect(results.filter((r) => r === "quota_exceeded")).toHaveLength(7);
    expect(await a.scheduleList({ accountId: "acc" })).toHaveLength(5);
    // An overwrite of an existing id from either node still works at the limit.
    const existing = (await b.scheduleList({ accountId: "acc" }))[0]!.id;
    const overwrites = await Promise.all([
      a.scheduleUpsert({ schedule: schedule(existing, { cron: "*/2 * * * *" }), maxSchedules: 5 }),
      b.scheduleUpsert({ schedule: schedule(existing, { cron: "*/3 * * * *" }), maxSchedules: 5 }),
    ]);
    expect(overwrites).toEqual(["replaced", "replaced"]);
  });

  it("a tick's claim and its messages commit together: a failed insert leaves the tick due", async () => {
    await a.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 });
    const revision = (await a.scheduleGet({ accountId: "acc", id: "s1" }))!.revision;
    const m = message("s1");
    await a.messageInsertMany({ items: [{ message: m }], now: T, dedupWindowMs: 0 });
    // The same message id again violates the primary key inside the claim's transaction.
    const first = message("s1");
    await expect(b.scheduleFire({ ...tick("s1", revision), messages: [first, m] })).rejects.toThrow();
    expect(await a.messageGet({ accountId: "acc", id: first.id })).toBeUndefined();
    const s = await a.scheduleGet({ accountId: "acc", id: "s1" });
    expect(s).toMatchObject({ nextRunAt: T + MIN, lastMessageIds: [] });
    expect((await a.scheduleListDue({ now: T + MIN, limit: 10 })).map((s) => s.id)).toEqual(["s1"]);
  });
});
