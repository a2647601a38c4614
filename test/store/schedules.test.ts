import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { logEntry } from "../../src/domain/log.js";
import type { Store } from "../../src/store/store.js";
import { adapters } from "./adapters.js";
import { account, message, MIN, schedule, T, tick } from "./schedule-fixtures.js";

for (const adapter of adapters) {
  describe(`schedule store: ${adapter.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose } = await adapter.open());
      await store.accountInsert({ account: account("acc") });
    });
    afterEach(async () => {
      await dispose();
    });

    const revisionOf = async (id: string) => (await store.scheduleGet({ accountId: "acc", id }))!.revision;

    it("stores every field and reads it back, scoped to the account", async () => {
      const body = Buffer.from([0, 1, 2, 255]);
      const spec = { method: "PUT", headers: {}, retries: 1 };
      const s = schedule("s1", { body, queueName: "q", delayMs: 5000, spec });
      expect(await store.scheduleUpsert({ schedule: s, maxSchedules: 10 })).toBe("created");
      const got = await store.scheduleGet({ accountId: "acc", id: "s1" });
      expect(got).toMatchObject({
        id: "s1",
        accountId: "acc",
        destination: s.destination,
        cron: "* * * * *",
        spec: s.spec,
        delayMs: 5000,
        queueName: "q",
        callerIp: "10.0.0.1",
        paused: false,
        createdAt: T,
        nextRunAt: T + MIN,
        lastMessageIds: [],
        lastStates: {},
      });
      expect(got!.body!.equals(body)).toBe(true);
      expect(got!.lastRunAt).toBeUndefined();
      expect(got!.error).toBeUndefined();
      expect(await store.scheduleGet({ accountId: "other", id: "s1" })).toBeUndefined();
      expect(await store.scheduleGet({ accountId: "acc", id: "nope" })).toBeUndefined();
    });

    it("lists oldest first (ties by id, byte order) and deletes", async () => {
      for (const [id, createdAt] of [
        ["b", T],
        ["a", T + 1],
        ["B", T],
        ["_", T],
      ] as const) {
        await store.scheduleUpsert({ schedule: schedule(id, { createdAt }), maxSchedules: 10 });
      }
      expect((await store.scheduleList({ accountId: "acc" })).map((s) => s.id)).toEqual(["B", "_", "b", "a"]);
      expect(await store.scheduleDelete({ accountId: "acc", id: "b" })).toBe(true);
      expect(await store.scheduleDelete({ accountId: "acc", id: "b" })).toBe(false);
      expect(await store.scheduleDelete({ accountId: "other", id: "a" })).toBe(false);
      expect((await store.scheduleList({ accountId: "acc" })).map((s) => s.id)).toEqual(["B", "_", "a"]);
    });

    it("claims a tick once: the second claim of the same tick writes nothing", async () => {
      expect(await store.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 })).toBe("created");
      const [due] = await store.scheduleListDue({ now: T + MIN, limit: 10 });
      const m1 = message("s1");
      const m2 = message("s1");
      const [a, b] = await Promise.all([
        store.scheduleFire({ ...tick("s1", due!.revision), messages: [m1] }),
        store.scheduleFire({ ...tick("s1", due!.revision), messages: [m2] }),
      ]);
      expect([a, b]).toEqual([true, false]);
      expect(await store.messageGet({ accountId: "acc", id: m1.id })).toMatchObject({
        state: "CREATED",
        scheduleId: "s1",
      });
      expect(await store.messageGet({ accountId: "acc", id: m2.id })).toBeUndefined();
      const s = await store.scheduleGet({ accountId: "acc", id: "s1" });
      expect(s).toMatchObject({
        lastRunAt: T + MIN,
        nextRunAt: T + 2 * MIN,
        lastMessageIds: [m1.id],
        lastStates: { [m1.id]: "IN_PROGRESS" },
      });
      expect(await store.scheduleListDue({ now: T + MIN, limit: 10 })).toEqual([]);
      // The tick's messages were inserted like a publish: with their CREATED log entry.
      const { logs } = await store.logList({
        accountId: "acc",
        filter: { messageIds: [m1.id, m2.id] },
        count: 10,
        order: "earliestFirst",
      });
      expect(logs.map((l) => [l.messageId, l.state])).toEqual([[m1.id, "CREATED"]]);
      // And they are claimable at once.
      const leased = await store.messageLeaseDue({ now: T + MIN, limit: 10, owner: "A", leaseUntil: T + 2 * MIN });
      expect(leased.map((m) => m.id)).toEqual([m1.id]);
    });

    it("lists due schedules earliest first, paused ones too, never those that will not fire again", async () => {
      await store.scheduleUpsert({ schedule: schedule("late", { nextRunAt: T + 2 * MIN }), maxSchedules: 10 });
      await store.scheduleUpsert({ schedule: schedule("early", { nextRunAt: T + MIN }), maxSchedules: 10 });
      await store.scheduleUpsert({ schedule: schedule("never", { nextRunAt: undefined }), maxSchedules: 10 });
      await store.scheduleUpsert({ schedule: schedule("future", { nextRunAt: T + 3 * MIN }), maxSchedules: 10 });
      await store.scheduleSetPaused({ accountId: "acc", id: "late", paused: true });
      const due = await store.scheduleListDue({ now: T + 2 * MIN, limit: 10 });
      expect(due.map((s) => [s.id, s.paused])).toEqual([
        ["early", false],
        ["late", true],
      ]);
      expect((await store.scheduleListDue({ now: T + 2 * MIN, limit: 1 })).map((s) => s.id)).toEqual(["early"]);
      expect((await store.scheduleGet({ accountId: "acc", id: "never" }))!.nextRunAt).toBeUndefined();
    });

    it("refuses a claim planned from a revision that was overwritten, paused or resumed since", async () => {
      await store.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 });
      const before = await revisionOf("s1");
      expect(
        await store.scheduleUpsert({
          schedule: schedule("s1", { destination: "http://127.0.0.1:9/new" }),
          maxSchedules: 10,
        }),
      ).toBe("replaced");
      expect(await store.scheduleFire({ ...tick("s1", before), messages: [message("s1")] })).toBe(false);

      const current = await revisionOf("s1");
      expect(await store.scheduleSetPaused({ accountId: "acc", id: "s1", paused: true })).toBe(true);
      expect(await store.scheduleFire({ ...tick("s1", current), messages: [message("s1")] })).toBe(false);
      const paused = await revisionOf("s1");
      expect(await store.scheduleSetPaused({ accountId: "acc", id: "s1", paused: false, nextRunAt: T + MIN })).toBe(
        true,
      );
      expect(await store.scheduleFire({ ...tick("s1", paused), messages: [message("s1")] })).toBe(false);
      expect(await store.scheduleSetPaused({ accountId: "acc", id: "nope", paused: true })).toBe(false);
      expect(await store.scheduleSetPaused({ accountId: "other", id: "s1", paused: true })).toBe(false);
      // Deleted and re-created under the same id: the old plan does not fire the new schedule.
      const live = await revisionOf("s1");
      await store.scheduleDelete({ accountId: "acc", id: "s1" });
      expect(await store.scheduleFire({ ...tick("s1", live), messages: [message("s1")] })).toBe(false);
      await store.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 });
      expect(await store.scheduleFire({ ...tick("s1", live), messages: [message("s1")] })).toBe(false);
      expect(await store.scheduleFire({ ...tick("s1", await revisionOf("s1")), messages: [message("s1")] })).toBe(
        true,
      );
    });

    it("pauses and resumes idempotently: a resume of an active schedule keeps its tick", async () => {
      await store.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 });
      const active = await revisionOf("s1");
      expect(await store.scheduleSetPaused({ accountId: "acc", id: "s1", paused: false, nextRunAt: T + 9 * MIN })).toBe(
        true,
      );
      expect(await store.scheduleGet({ accountId: "acc", id: "s1" })).toMatchObject({
        paused: false,
        revision: active,
        nextRunAt: T + MIN,
      });
      await store.scheduleSetPaused({ accountId: "acc", id: "s1", paused: true });
      const paused = await revisionOf("s1");
      expect(paused).not.toBe(active);
      await store.scheduleSetPaused({ accountId: "acc", id: "s1", paused: true });
      expect(await store.scheduleGet({ accountId: "acc", id: "s1" })).toMatchObject({
        paused: true,
        revision: paused,
        nextRunAt: T + MIN,
      });
      await store.scheduleSetPaused({ accountId: "acc", id: "s1", paused: false, nextRunAt: T + 5 * MIN });
      const resumed = await store.scheduleGet({ accountId: "acc", id: "s1" });
      expect(resumed).toMatchObject({ paused: false, nextRunAt: T + 5 * MIN });
      expect(resumed!.revision).not.toBe(paused);
    });

    it("moves a skipped tick without touching the last run; records and then clears a tick's error", async () => {
      await store.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 });
      const m = message("s1");
      expect(await store.scheduleFire({ ...tick("s1", await revisionOf("s1")), messages: [m] })).toBe(true);
      // A skipped tick (too old, or paused): the stored tick moves on, the last run stays.
      const revision = await revisionOf("s1");
      const skip = { accountId: "acc", id: "s1", revision, dueAt: T + 2 * MIN, now: T + 9 * MIN };
      expect(await store.scheduleFire({ ...skip, nextRunAt: T + 10 * MIN, messages: [] })).toBe(true);
      expect(await store.scheduleGet({ accountId: "acc", id: "s1" })).toMatchObject({
        nextRunAt: T + 10 * MIN,
        lastRunAt: T + MIN,
        lastMessageIds: [m.id],
      });
      // A tick that published nothing (its URL group is gone) records why.
      const failed = { ...tick("s1", await revisionOf("s1"), T + 10 * MIN), error: "url group g not found" };
      expect(await store.scheduleFire({ ...failed, messages: [] })).toBe(true);
      const afterError = await store.scheduleGet({ accountId: "acc", id: "s1" });
      expect(afterError).toMatchObject({ lastRunAt: T + 10 * MIN, lastMessageIds: [], error: "url group g not found" });
      const next = message("s1", T + 11 * MIN);
      expect(
        await store.scheduleFire({ ...tick("s1", await revisionOf("s1"), T + 11 * MIN), messages: [next] }),
      ).toBe(true);
      const ok = await store.scheduleGet({ accountId: "acc", id: "s1" });
      expect(ok).toMatchObject({ lastRunAt: T + 11 * MIN, lastMessageIds: [next.id] });
      expect(ok!.error).toBeUndefined();
      // A last tick: nothing stored as due any more.
      const last = { ...tick("s1", await revisionOf("s1"), T + 12 * MIN), nextRunAt: undefined };
      expect(await store.scheduleFire({ ...last, messages: [] })).toBe(true);
      expect((await store.scheduleGet({ accountId: "acc", id: "s1" }))!.nextRunAt).toBeUndefined();
      expect(await store.scheduleListDue({ now: T + 99 * MIN, limit: 10 })).toEqual([]);
    });

    it("an overwrite replaces every field and resets the history", async () => {
      await store.scheduleUpsert({
        schedule: schedule("s1", { queueName: "q", body: Buffer.from("x"), delayMs: 7 }),
        maxSchedules: 10,
      });
      await store.scheduleFire({ ...tick("s1", await revisionOf("s1")), messages: [message("s1")], error: "e" });
      await store.scheduleSetPaused({ accountId: "acc", id: "s1", paused: true });
      await store.scheduleUpsert({
        schedule: schedule("s1", { cron: "*/5 * * * *", createdAt: T + 3 * MIN, nextRunAt: T + 5 * MIN }),
        maxSchedules: 1,
      });
      const s = await store.scheduleGet({ accountId: "acc", id: "s1" });
      expect(s).toMatchObject({
        cron: "*/5 * * * *",
        delayMs: 0,
        paused: false,
        createdAt: T + 3 * MIN,
        nextRunAt: T + 5 * MIN,
        lastMessageIds: [],
        lastStates: {},
      });
      for (const field of ["queueName", "body", "lastRunAt", "error"] as const) expect(s![field]).toBeUndefined();
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
      // Counted per account.
      await store.accountInsert({ account: account("acc2") });
      expect(await store.scheduleUpsert({ schedule: schedule("a", { accountId: "acc2" }), maxSchedules: 1 })).toBe(
        "created",
      );
      // Several creates in one go (one group-commit turn) still count one after the other.
      const burst = await Promise.all(
        ["x", "y", "z"].map((id) => store.scheduleUpsert({ schedule: schedule(id), maxSchedules: 4 })),
      );
      expect(burst).toEqual(["created", "created", "quota_exceeded"]);
    });

    it("derives the last tick's states from the hot table and the final log entry", async () => {
      await store.scheduleUpsert({ schedule: schedule("s1"), maxSchedules: 10 });
      const delivered = message("s1");
      const canceled = message("s1");
      const pending = message("s1", T + 5 * MIN);
      await store.scheduleFire({ ...tick("s1", await revisionOf("s1")), messages: [delivered, canceled, pending] });
      const states = async () => (await store.scheduleGet({ accountId: "acc", id: "s1" }))!.lastStates;
      expect(await states()).toEqual({
        [delivered.id]: "IN_PROGRESS",
        [canceled.id]: "IN_PROGRESS",
        [pending.id]: "IN_PROGRESS",
      });
      await store.messageCancel({ accountId: "acc", now: T + MIN, filter: { messageIds: [canceled.id] } });
      const [leased] = await store.messageLeaseDue({ now: T + MIN, limit: 10, owner: "A", leaseUntil: T + 2 * MIN });
      expect(leased!.id).toBe(delivered.id);
      await store.messageFinish({
        message: leased!,
        owner: "A",
        now: T + MIN,
        outcome: { kind: "delivered" },
        logs: [logEntry(leased!, "DELIVERED", T + MIN)],
        newMessages: [],
      });
      expect(await states()).toEqual({
        [delivered.id]: "SUCCESS",
        [canceled.id]: "FAIL",
        [pending.id]: "IN_PROGRESS",
      });
      // The list derives the same states.
      expect((await store.scheduleList({ accountId: "acc" }))[0]!.lastStates).toEqual(await states());
    });
  });
}
