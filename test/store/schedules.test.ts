import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newMessageId } from "../../src/domain/ids.js";
import type { NewMessage } from "../../src/domain/message.js";
import type { NewSchedule } from "../../src/store/schedule-store.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { Store } from "../../src/store/store.js";

/** Schedule store rules every adapter must keep (a fresh database per test). */
let dir: string;
let store: Store;
const T = Date.UTC(2030, 0, 7, 12, 0, 0);
const MIN = 60_000;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "ferry-store-"));
  store = openSqliteStore({ path: join(dir, "ferry.db"), synchronous: "NORMAL" });
  await store.accountInsert({
    account: {
      id: "acc",
      customerId: "c",
      token: "tok",
      password: "p",
      currentSigningKey: "sig_a",
      nextSigningKey: "sig_b",
      plan: "paid",
      state: "active",
      active: true,
      createdAt: T,
    },
  });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function schedule(id: string, patch: Partial<NewSchedule> = {}): NewSchedule {
  return {
    id,
    accountId: "acc",
    destination: "http://127.0.0.1:9/x",
    cron: "* * * * *",
    spec: { method: "POST", headers: {}, retries: 3 },
    delayMs: 0,
    callerIp: "10.0.0.1",
    createdAt: T,
    nextRunAt: T + MIN,
    ...patch,
  };
}

function message(scheduleId: string): NewMessage {
  return {
    id: newMessageId(),
    accountId: "acc",
    kind: "message",
    state: "CREATED",
    url: "http://127.0.0.1:9/x",
    body: undefined,
    spec: { method: "POST", headers: {}, retries: 3 },
    createdAt: T + MIN,
    notBefore: 0,
    dueAt: T + MIN,
    retried: 0,
    scheduleId,
  };
}

describe("schedule store", () => {
  it("claims a tick once: the second claim of the same tick writes nothing", async () => {
    expect(await store.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 })).toBe("created");
    const [due] = await store.scheduleListDue({ now: T + MIN, limit: 10 });
    const claim = {
      accountId: "acc",
      id: "s1",
      revision: due!.revision,
      dueAt: T + MIN,
      nextRunAt: T + 2 * MIN,
      firedAt: T + MIN,
      now: T + MIN,
    };
    const m1 = message("s1");
    const m2 = message("s1");
    const [a, b] = await Promise.all([
      store.scheduleFire({ ...claim, messages: [m1] }),
      store.scheduleFire({ ...claim, messages: [m2] }),
    ]);
    expect([a, b]).toEqual([true, false]);
    expect(await store.messageGet({ accountId: "acc", id: m1.id })).toBeDefined();
    expect(await store.messageGet({ accountId: "acc", id: m2.id })).toBeUndefined();
    const s = await store.scheduleGet({ accountId: "acc", id: "s1" });
    expect(s).toMatchObject({
      lastRunAt: T + MIN,
      nextRunAt: T + 2 * MIN,
      lastMessageIds: [m1.id],
      lastStates: { [m1.id]: "IN_PROGRESS" },
    });
    expect(await store.scheduleListDue({ now: T + MIN, limit: 10 })).toEqual([]);
  });

  it("refuses a claim planned from a revision that was overwritten, paused or resumed since", async () => {
    await store.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 });
    const [before] = await store.scheduleListDue({ now: T + MIN, limit: 10 });
    expect(
      await store.scheduleUpsert({
        schedule: schedule("s1", { destination: "http://127.0.0.1:9/new" }),
        maxSchedules: 10,
      }),
    ).toBe("replaced");
    const stale = {
      accountId: "acc",
      id: "s1",
      revision: before!.revision,
      dueAt: T + MIN,
      nextRunAt: T + 2 * MIN,
      firedAt: T + MIN,
      now: T + MIN,
    };
    expect(await store.scheduleFire({ ...stale, messages: [message("s1")] })).toBe(false);

    const [current] = await store.scheduleListDue({ now: T + MIN, limit: 10 });
    expect(await store.scheduleSetPaused({ accountId: "acc", id: "s1", paused: true })).toBe(true);
    expect(await store.scheduleFire({ ...stale, revision: current!.revision, messages: [message("s1")] })).toBe(false);
    expect(await store.scheduleSetPaused({ accountId: "acc", id: "nope", paused: true })).toBe(false);
  });

  it("counts max_schedules in the write, but lets an existing id be replaced", async () => {
    expect(await store.scheduleUpsert({ schedule: schedule("a"), maxSchedules: 2 })).toBe("created");
    expect(await store.scheduleUpsert({ schedule: schedule("b"), maxSchedules: 2 })).toBe("created");
    const results = await Promise.all([
      store.scheduleUpsert({ schedule: schedule("c"), maxSchedules: 2 }),
      store.scheduleUpsert({ schedule: schedule("b"), maxSchedules: 2 }),
    ]);
    expect(results).toEqual(["quota_exceeded", "replaced"]);
    expect((await store.scheduleList({ accountId: "acc" })).map((s) => s.id)).toEqual(["a", "b"]);
    expect(await store.scheduleList({ accountId: "other" })).toEqual([]);
  });

  it("derives the last tick's states from the hot table and the final log entry", async () => {
    await store.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 });
    const [due] = await store.scheduleListDue({ now: T + MIN, limit: 10 });
    const m = message("s1");
    await store.scheduleFire({
      accountId: "acc",
      id: "s1",
      revision: due!.revision,
      dueAt: T + MIN,
      nextRunAt: T + 2 * MIN,
      firedAt: T + MIN,
      messages: [m],
      now: T + MIN,
    });
    expect((await store.scheduleGet({ accountId: "acc", id: "s1" }))!.lastStates).toEqual({ [m.id]: "IN_PROGRESS" });
    await store.messageCancel({ accountId: "acc", now: T + MIN, filter: { messageIds: [m.id] } });
    expect((await store.scheduleGet({ accountId: "acc", id: "s1" }))!.lastStates).toEqual({ [m.id]: "FAIL" });
  });
});
