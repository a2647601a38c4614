import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/domain/message.js";
import type { NewWorkflowRun, Waiter } from "../../src/domain/workflow.js";
import type { Store } from "../../src/store/store.js";
import { adapters } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";

/** The workflow store methods (src/store/workflow-store.ts, docs/workflows.md) against every adapter. */

let seq = 0;
const stepMessage = (runId: string, body: string, over: Partial<NewMessage> = {}): NewMessage =>
  aMessage("acc-1", {
    id: `msg_${runId}_${++seq}`,
    state: "CREATED",
    body: Buffer.from(body),
    spec: { method: "POST", headers: {}, retries: 0, workflow: { runId, role: "step" } },
    ...over,
  });

const newRun = (runId: string, initMessageId: string, over: Partial<NewWorkflowRun> = {}): NewWorkflowRun => ({
  accountId: "acc-1",
  runId,
  url: "http://127.0.0.1:9/wf",
  state: "RUN_STARTED",
  createdAt: NOW,
  config: { headers: {}, retries: 3 },
  initialBody: Buffer.from("payload"),
  restTrigger: false,
  initMessageId,
  ...over,
});

for (const adapter of adapters) {
  describe(`workflow store: ${adapter.name}`, () => {
    let store: Store;
    let more: () => Promise<Store>;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose, more } = await adapter.open());
      await store.accountInsert({ account: anAccount("acc-1") });
      await store.accountInsert({ account: anAccount("acc-2") });
    });
    afterEach(async () => {
      await dispose();
    });

    async function started(runId: string) {
      const init = stepMessage(runId, "payload");
      const created = await store.workflowRunCreate({ run: newRun(runId, init.id), item: { message: init }, now: NOW });
      expect(created.created).toBe(true);
      return init;
    }

    it("creates a run with its payload as entry 0; the same id again writes nothing", async () => {
      const init = await started("wfr_a");
      const again = stepMessage("wfr_a", "other");
      const second = await store.workflowRunCreate({ run: newRun("wfr_a", again.id), item: { message: again }, now: NOW });
      expect(second).toMatchObject({ created: false, run: { initMessageId: init.id } });
      expect(await store.messageGet({ accountId: "acc-1", id: again.id })).toBeUndefined();
      const history = await store.workflowHistory({ accountId: "acc-1", runId: "wfr_a" });
      expect(history.map((e) => [e.messageId, e.body.toString()])).toEqual([[init.id, "payload"]]);
      // Runs belong to their account: another account does not see it.
      expect(await store.workflowRunGet({ accountId: "acc-2", runId: "wfr_a" })).toBeUndefined();
    });

    it("appends steps in order and cuts a delivery's history at its own entry", async () => {
      const init = await started("wfr_b");
      const s1 = stepMessage("wfr_b", "one");
      const s2 = stepMessage("wfr_b", "two");
      await store.workflowStepAppend({ accountId: "acc-1", runId: "wfr_b", steps: [{ item: { message: s1 }, callType: "step" }], now: NOW });
      await store.workflowStepAppend({ accountId: "acc-1", runId: "wfr_b", steps: [{ item: { message: s2 }, callType: "step" }], now: NOW });
      const prepared = await store.workflowDeliveryPrepare({ accountId: "acc-1", runId: "wfr_b", messageId: s1.id, now: NOW });
      expect(prepared.deliver && prepared.history.map((e) => e.messageId)).toEqual([init.id, s1.id]);
      expect(await store.messageGet({ accountId: "acc-1", id: s2.id })).toBeDefined();
    });

    it("a step inserted leased comes back with its delivery (run, history up to it) and the run's settings", async () => {
      const forwarded = { "X-Trace": ["t-1"] };
      const init = stepMessage("wfr_lease", "payload");
      const run = newRun("wfr_lease", init.id, { config: { headers: forwarded, retries: 5, retryDelayExpr: "1000" } });
      await store.workflowRunCreate({ run, item: { message: init }, now: NOW });
      // Not leased (a claim delivers it): no delivery is read.
      const plain = stepMessage("wfr_lease", "one");
      const first = await store.workflowStepAppend({
        accountId: "acc-1",
        runId: "wfr_lease",
        steps: [{ item: { message: plain }, callType: "step", runConfig: { ownRetries: false } }],
        now: NOW,
      });
      expect(first.appended && first.delivery).toBeUndefined();
      // Leased to this node (the publish fast path): the run and the history up to and including its own entry.
      const leased = stepMessage("wfr_lease", "two");
      const second = await store.workflowStepAppend({
        accountId: "acc-1",
        runId: "wfr_lease",
        steps: [{ item: { message: leased, leaseOwner: "node-a", leaseUntil: NOW + 30_000 }, callType: "step", runConfig: { ownRetries: true } }],
        now: NOW,
      });
      if (!second.appended) throw new Error("not appended");
      expect(second.results[0]!.message).toMatchObject({ state: "ACTIVE", leaseOwner: "node-a" });
      expect(second.delivery?.run).toMatchObject({ runId: "wfr_lease", state: "RUN_STARTED", initMessageId: init.id });
      expect(second.delivery?.history.map((e) => [e.messageId, e.body.toString()])).toEqual([
        [init.id, "payload"],
        [plain.id, "one"],
        [leased.id, "two"],
      ]);
      // The run's settings were applied in the append: forwarded headers and retry delay; retries unless the step set
      // its own (the leased step did: it keeps 0).
      const stored = await store.messageGet({ accountId: "acc-1", id: plain.id });
      expect(stored?.spec).toMatchObject({ headers: forwarded, retries: 5, retryDelayExpr: "1000" });
      expect(second.results[0]!.message?.spec).toMatchObject({ headers: forwarded, retries: 0, retryDelayExpr: "1000" });
      // A step appended with other steps in one call gets no delivery (only a single step's history is its own).
      const a = stepMessage("wfr_lease", "a");
      const b = stepMessage("wfr_lease", "b");
      const both = await store.workflowStepAppend({
        accountId: "acc-1",
        runId: "wfr_lease",
        steps: [a, b].map((message) => ({ item: { message, leaseOwner: "node-a", leaseUntil: NOW + 30_000 }, callType: "step" })),
        now: NOW,
      });
      expect(both.appended && both.delivery).toBeUndefined();
    });

    it("ending an invoked run appends its result to the invoker, read from the ended row (followInvoker)", async () => {
      await started("wfr_parent");
      const childInit = stepMessage("wfr_child", "child payload");
      const invoker = {
        workflowRunId: "wfr_parent",
        workflowUrl: "http://127.0.0.1:9/parent",
        workflowRunCreatedAt: NOW,
        step: { stepId: 2, stepName: "call child", stepType: "Invoke" },
        headers: {},
        spec: { method: "POST", headers: {}, retries: 0, workflow: { runId: "wfr_parent", role: "step" as const } },
      };
      await store.workflowRunCreate({ run: newRun("wfr_child", childInit.id, { invoker }), item: { message: childInit }, now: NOW });
      const ended = await store.workflowRunEnd({
        accountId: "acc-1",
        runId: "wfr_child",
        state: "RUN_SUCCESS",
        result: '"done"',
        now: NOW + 1,
        followInvoker: true,
      });
      expect(ended).toMatchObject({ ended: true, followedUp: true, run: { state: "RUN_SUCCESS", result: '"done"' } });
      const parent = await store.workflowHistory({ accountId: "acc-1", runId: "wfr_parent" });
      expect(parent).toHaveLength(2);
      expect(JSON.parse(parent[1]!.body.toString())).toMatchObject({
        stepName: "call child",
        out: JSON.stringify({ isFailed: false, isCanceled: false, body: '"done"' }),
      });
      // Ending it again changes nothing and answers the run as it is; an unknown run answers no run.
      expect(await store.workflowRunEnd({ accountId: "acc-1", runId: "wfr_child", state: "RUN_CANCELED", now: NOW + 2, followInvoker: true }))
        .toMatchObject({ ended: false, run: { state: "RUN_SUCCESS" } });
      expect(await store.workflowRunEnd({ accountId: "acc-1", runId: "wfr_none", state: "RUN_CANCELED", now: NOW + 2 })).toEqual({ ended: false });
      expect(await store.workflowHistory({ accountId: "acc-1", runId: "wfr_parent" })).toHaveLength(2);
    });

    it("an ended run accepts no step, and its pending messages are not delivered", async () => {
      await started("wfr_c");
      const pending = stepMessage("wfr_c", "sleeping");
      await store.workflowStepAppend({ accountId: "acc-1", runId: "wfr_c", steps: [{ item: { message: pending }, callType: "step" }], now: NOW });
      const end = await store.workflowRunEnd({ accountId: "acc-1", runId: "wfr_c", state: "RUN_CANCELED", now: NOW + 1 });
      expect(end).toMatchObject({ ended: true, run: { state: "RUN_CANCELED", completedAt: NOW + 1 } });
      expect((await store.workflowRunEnd({ accountId: "acc-1", runId: "wfr_c", state: "RUN_SUCCESS", now: NOW + 2 })).ended).toBe(false);
      const late = stepMessage("wfr_c", "late");
      const refused = await store.workflowStepAppend({ accountId: "acc-1", runId: "wfr_c", steps: [{ item: { message: late }, callType: "step" }], now: NOW });
      expect(refused).toMatchObject({ appended: false, run: { state: "RUN_CANCELED" } });
      expect(await store.messageGet({ accountId: "acc-1", id: late.id })).toBeUndefined();
      expect((await store.workflowDeliveryPrepare({ accountId: "acc-1", runId: "wfr_c", messageId: pending.id, now: NOW })).deliver).toBe(false);
    });

    it("a failed run keeps its DLQ entry and its failure callback message (the logs' failureFunction)", async () => {
      await started("wfr_fail");
      const end = await store.workflowRunEnd({
        accountId: "acc-1",
        runId: "wfr_fail",
        state: "RUN_FAILED",
        dlqId: "dlq_1",
        failureMessageId: "msg_failure",
        now: NOW + 1,
      });
      expect(end.ended).toBe(true);
      const run = await store.workflowRunGet({ accountId: "acc-1", runId: "wfr_fail" });
      expect(run).toMatchObject({ state: "RUN_FAILED", dlqId: "dlq_1", failureMessageId: "msg_failure" });
      // The DLQ's callback retry: the new callback message is inserted and becomes the run's, together.
      const again = aMessage("acc-1", { id: "msg_failure_again", state: "CREATED" });
      expect(await store.workflowFailureResend({ accountId: "acc-1", runId: "wfr_fail", item: { message: again }, now: NOW + 2 })).toBe(true);
      expect((await store.workflowRunGet({ accountId: "acc-1", runId: "wfr_fail" }))?.failureMessageId).toBe("msg_failure_again");
      expect(await store.messageGet({ accountId: "acc-1", id: "msg_failure_again" })).toBeDefined();
      const orphan = aMessage("acc-1", { id: "msg_orphan", state: "CREATED" });
      expect(await store.workflowFailureResend({ accountId: "acc-1", runId: "wfr_none", item: { message: orphan }, now: NOW })).toBe(false);
      expect(await store.messageGet({ accountId: "acc-1", id: "msg_orphan" })).toBeUndefined();
      // A run that ended otherwise has none.
      await started("wfr_ok");
      await store.workflowRunEnd({ accountId: "acc-1", runId: "wfr_ok", state: "RUN_SUCCESS", now: NOW + 1 });
      expect((await store.workflowRunGet({ accountId: "acc-1", runId: "wfr_ok" }))?.failureMessageId).toBeUndefined();
    });

    it("a waiter is resolved once: by notify or by its timeout, never both", async () => {
      await started("wfr_d");
      const timeout = stepMessage("wfr_d", "timed out", { dueAt: NOW + 60_000, notBefore: NOW + 60_000 });
      timeout.spec = { ...timeout.spec, workflow: { runId: "wfr_d", role: "timeout", waiterId: "wtr_1" } };
      const waiter: Waiter = {
        waiterId: "wtr_1",
        accountId: "acc-1",
        eventId: "evt",
        runId: "wfr_d",
        url: "http://127.0.0.1:9/wf",
        deadline: NOW + 60_000,
        headers: {},
        timeoutUrl: "http://127.0.0.1:9/wf",
        timeoutHeaders: {},
        step: { stepId: 1, stepName: "w", stepType: "Wait", concurrent: 1 },
        timeout: "60s",
        timeoutMessageId: timeout.id,
        deliverySpec: { method: "POST", headers: {}, retries: 3, workflow: { runId: "wfr_d", role: "step" } },
        createdAt: NOW,
      };
      expect(await store.workflowWaitRegister({ waiter, timeoutItem: { message: timeout }, now: NOW })).toEqual({ registered: true });
      expect(await store.workflowWaiterCount()).toBe(1);
      const result = stepMessage("wfr_d", "event");
      const resolved = await store.workflowNotifyApply({
        accountId: "acc-1",
        deliveries: [{ waiterId: "wtr_1", runId: "wfr_d", step: { item: { message: result }, callType: "step" } }],
        now: NOW,
      });
      expect(resolved).toEqual(["wtr_1"]);
      const twice = await store.workflowNotifyApply({
        accountId: "acc-1",
        deliveries: [{ waiterId: "wtr_1", runId: "wfr_d", step: { item: { message: stepMessage("wfr_d", "again") }, callType: "step" } }],
        now: NOW,
      });
      expect(twice).toEqual([]);
      // The timeout finds its waiter gone: it is not delivered and adds nothing to the history.
      const fired = await store.workflowDeliveryPrepare({
        accountId: "acc-1",
        runId: "wfr_d",
        messageId: timeout.id,
        waiterId: "wtr_1",
        body: timeout.body!,
        now: NOW + 60_000,
      });
      expect(fired.deliver).toBe(false);
      const history = await store.workflowHistory({ accountId: "acc-1", runId: "wfr_d" });
      expect(history.map((e) => e.body.toString())).toEqual(["payload", "event"]);
      expect(await store.workflowWaiterCount()).toBe(0);
    });

    it("keeps no lookback event when a wait of the run registered after the notify listed the waiters", async () => {
      await started("wfr_race");
      // The wait registers between the notify's listing (nobody waiting) and its apply.
      const timeout = stepMessage("wfr_race", "t", { dueAt: NOW + 60_000, notBefore: NOW + 60_000 });
      timeout.spec = { ...timeout.spec, workflow: { runId: "wfr_race", role: "timeout", waiterId: "wtr_race" } };
      const waiter: Waiter = {
        waiterId: "wtr_race",
        accountId: "acc-1",
        eventId: "raced",
        runId: "wfr_race",
        url: "http://127.0.0.1:9/wf",
        deadline: NOW + 60_000,
        headers: {},
        timeoutUrl: "http://127.0.0.1:9/wf",
        timeoutHeaders: {},
        step: { stepId: 1, stepName: "w", stepType: "Wait", concurrent: 1 },
        timeout: "60s",
        timeoutMessageId: timeout.id,
        deliverySpec: { method: "POST", headers: {}, retries: 3, workflow: { runId: "wfr_race", role: "step" } },
        createdAt: NOW,
      };
      expect(await store.workflowWaitRegister({ waiter, timeoutItem: { message: timeout }, now: NOW })).toEqual({ registered: true });
      const applied = await store.workflowNotifyApply({
        accountId: "acc-1",
        deliveries: [],
        lookback: { runId: "wfr_race", eventId: "raced", data: Buffer.from("data") },
        now: NOW,
      });
      expect(applied).toEqual([]);
      // No event was kept: the notify lists again and resolves the waiter (src/services/workflows.ts notify).
      const step = { item: { message: stepMessage("wfr_race", "x") }, callType: "step" };
      expect(await store.workflowWaitResolve({ accountId: "acc-1", runId: "wfr_race", eventId: "raced", step, now: NOW })).toBe(false);
      expect((await store.workflowWaiterList({ accountId: "acc-1", eventId: "raced", runId: "wfr_race" })).map((w) => w.waiterId)).toEqual([
        "wtr_race",
      ]);
    });

    it("keeps an early event for a run (lookback) and hands it to the run's wait", async () => {
      await started("wfr_e");
      const none = await store.workflowNotifyApply({
        accountId: "acc-1",
        deliveries: [],
        lookback: { runId: "wfr_e", eventId: "early", data: Buffer.from("data") },
        now: NOW,
      });
      expect(none).toEqual([]);
      const waiter = { waiterId: "wtr_2", accountId: "acc-1", eventId: "early", runId: "wfr_e" } as Waiter;
      const timeout = stepMessage("wfr_e", "t");
      const registration = await store.workflowWaitRegister({ waiter, timeoutItem: { message: timeout }, now: NOW });
      expect(registration).toMatchObject({ registered: false, reason: "event" });
      expect(await store.messageGet({ accountId: "acc-1", id: timeout.id })).toBeUndefined();
      const step = stepMessage("wfr_e", "result");
      expect(await store.workflowWaitResolve({ accountId: "acc-1", runId: "wfr_e", eventId: "early", step: { item: { message: step }, callType: "step" }, now: NOW })).toBe(true);
      expect(await store.workflowWaitResolve({ accountId: "acc-1", runId: "wfr_e", eventId: "early", step: { item: { message: stepMessage("wfr_e", "x") }, callType: "step" }, now: NOW })).toBe(false);
    });

    it("bulk cancel ends started runs only; retention deletes ended runs before the cutoff only", async () => {
      await started("wfr_f");
      await started("wfr_g");
      await started("wfr_h");
      await store.workflowRunEnd({ accountId: "acc-1", runId: "wfr_f", state: "RUN_SUCCESS", result: "r", now: NOW });
      const cancelled = await store.workflowRunCancelMany({ accountId: "acc-1", filter: { url: "http://127.0.0.1:9/" }, count: 10, now: NOW + 10 });
      expect(cancelled.map((r) => r.runId).sort()).toEqual(["wfr_g", "wfr_h"]);
      const counts = await store.workflowRunCounts({ accountId: "acc-1" });
      expect(counts).toMatchObject({ RUN_SUCCESS: 1, RUN_CANCELED: 2, RUN_STARTED: 0 });
      await started("wfr_i");
      expect(await store.workflowRetentionDelete({ before: NOW + 5, limit: 100 })).toBe(1);
      expect(await store.workflowRunGet({ accountId: "acc-1", runId: "wfr_f" })).toBeUndefined();
      expect(await store.workflowHistory({ accountId: "acc-1", runId: "wfr_f" })).toEqual([]);
      expect(await store.workflowRetentionDelete({ before: NOW + 1000, limit: 100 })).toBe(2);
      expect((await store.workflowRunGet({ accountId: "acc-1", runId: "wfr_i" }))?.state).toBe("RUN_STARTED");
    });

    it("two nodes appending to one run at once: every step lands once, at its own position", async () => {
      await started("wfr_j");
      const other = await more();
      const appends = Array.from({ length: 20 }, (_, i) => {
        const node = i % 2 === 0 ? store : other;
        const message = stepMessage("wfr_j", `s${i}`);
        return node.workflowStepAppend({ accountId: "acc-1", runId: "wfr_j", steps: [{ item: { message }, callType: "step" }], now: NOW });
      });
      const ending = other.workflowRunEnd({ accountId: "acc-1", runId: "wfr_j", state: "RUN_SUCCESS", now: NOW });
      const results = await Promise.all(appends);
      await ending;
      const history = await store.workflowHistory({ accountId: "acc-1", runId: "wfr_j" });
      const appended = results.filter((r) => r.appended).length;
      // Appends after the end were refused and wrote nothing; those before it are each in the history once.
      expect(history).toHaveLength(1 + appended);
      expect(new Set(history.map((e) => e.messageId)).size).toBe(history.length);
    });
  });
}
