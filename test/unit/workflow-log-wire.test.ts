import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HistoryEntry, WorkflowRun as RunRow } from "../../src/domain/workflow.js";
import { WorkflowRun } from "../../src/http/schemas/workflows.js";
import { runLogView } from "../../src/http/views/workflow-view.js";
import type { RunActivity } from "../../src/services/workflow-activity.js";

/**
 * A run's logs as the wire writes them: the view builds each step from the SDK's step JSON (src/http/views/
 * workflow-view.ts) and Fastify serializes it through the wire shape (src/http/schemas/workflows.ts), as the
 * `GET /v2/workflows/events` route does. The e2e suites run the official SDK; this covers what it rarely sends.
 */
const app = Fastify();
let rendered: unknown;
app.get("/run", { schema: { response: { 200: WorkflowRun } } }, async () => rendered);
beforeAll(() => app.ready());
afterAll(() => app.close());

/** The run's answer, written by Fastify through the wire shape. */
async function wire(history: HistoryEntry[], activity?: RunActivity): Promise<Record<string, unknown>> {
  rendered = runLogView(run, history, activity);
  const res = await app.inject({ method: "GET", url: "/run" });
  expect(res.statusCode).toBe(200);
  return res.json();
}

const run: RunRow = {
  accountId: "acc",
  runId: "wfr_1",
  url: "http://127.0.0.1:9/wf",
  state: "RUN_FAILED",
  createdAt: 1_000,
  updatedAt: 2_000,
  completedAt: 2_000,
  config: { headers: {}, retries: 3 },
  initialBody: Buffer.from('{"n":1}'),
  restTrigger: false,
  initMessageId: "msg_0",
  dlqId: "dlq_1",
};

const entry = (messageId: string, step: unknown, createdAt = 1_500): HistoryEntry => ({
  messageId,
  body: Buffer.from(typeof step === "string" ? step : JSON.stringify(step)),
  callType: "step",
  createdAt,
});

describe("a run's logs on the wire", () => {
  it("keeps every field of the SDK's step JSON its types name, with the type they give it", async () => {
    const body = await wire([
      entry("msg_0", '{"n":1}', 1_000),
      entry("msg_1", { stepId: 1, stepName: "nap", stepType: "SleepFor", sleepFor: "10s", concurrent: 1 }),
      entry("msg_2", { stepId: 2, stepName: "until", stepType: "SleepUntil", sleepUntil: 1795.5, concurrent: 1 }),
      entry("msg_3", {
        stepId: 3,
        stepName: "call",
        stepType: "Call",
        concurrent: 1,
        callUrl: "http://127.0.0.1:9/x",
        callMethod: "POST",
        callBody: { a: [1, null] },
        callHeaders: { "content-type": "application/json" },
      }),
      entry("msg_4", { stepId: 4, stepName: "run", stepType: "Run", out: { not: "text" }, concurrent: 1 }),
    ]);
    const steps = (body.steps as { steps: Record<string, unknown>[] }[]).flatMap((g) => g.steps);
    expect(steps[0]).toEqual({
      stepId: 0,
      stepName: "init",
      stepType: "Initial",
      callType: "step",
      messageId: "msg_0",
      out: '{"n":1}',
      concurrent: 1,
      state: "STEP_SUCCESS",
      createdAt: 1_000,
    });
    // A duration text and a fractional time come out as they went in (a union of number and text; no truncation).
    expect(steps[1]).toMatchObject({ stepName: "nap", sleepFor: "10s" });
    expect(steps[2]).toMatchObject({ stepName: "until", sleepUntil: 1795.5 });
    // The caller's own JSON is written as it is.
    expect(steps[3]).toMatchObject({
      callUrl: "http://127.0.0.1:9/x",
      callMethod: "POST",
      callBody: { a: [1, null] },
      callHeaders: { "content-type": "application/json" },
    });
    // `out` is JSON text (contract §5): anything else is written as its JSON text.
    expect(steps[4]!.out).toBe('{"not":"text"}');
  });

  it("leaves out fields the SDK's types do not name, and fields of the wrong type", async () => {
    const body = await wire([
      entry("msg_0", "payload", 1_000),
      entry("msg_1", { stepId: 1, stepName: 7, stepType: "Run", out: "1", concurrent: 1, waitTimeout: "y", secret: 1 }),
    ]);
    const step = (body.steps as { steps: Record<string, unknown>[] }[])[1]!.steps[0]!;
    expect(Object.keys(step).sort()).toEqual(
      ["callType", "concurrent", "createdAt", "messageId", "out", "state", "stepId", "stepType"].sort(),
    );
  });

  it("writes the next group, the failure function and the run's own fields", async () => {
    const error = { error: "500 Internal Server Error", body: "boom", headers: { "X-A": ["1"] }, status: 500, time: 1 };
    const body = await wire([entry("msg_0", "payload", 1_000)], {
      next: [{ messageId: "msg_9", stepName: "boom", state: "STEP_FAILED", retries: 3, errors: [error] }],
      failureFunction: {
        messageId: "msg_f",
        url: "http://127.0.0.1:9/fail",
        state: "CALLBACK_SUCCESS",
        failStatus: 500,
        failResponse: "boom",
        failHeaders: {},
        dlqId: "dlq_1",
        errors: [],
        responseStatus: 200,
        responseBody: "ok",
        responseHeaders: { "Content-Type": ["text/plain"] },
      },
    });
    expect(body).toMatchObject({
      workflowRunId: "wfr_1",
      workflowState: "RUN_FAILED",
      workflowRunCompletedAt: 2_000,
      dlqId: "dlq_1",
      failureFunction: { messageId: "msg_f", state: "CALLBACK_SUCCESS", responseStatus: 200, failStatus: 500 },
    });
    expect((body.steps as unknown[]).at(-1)).toEqual({
      type: "next",
      steps: [{ messageId: "msg_9", stepName: "boom", state: "STEP_FAILED", retries: 3, errors: [error] }],
    });
    expect(body).not.toHaveProperty("invoker");
    expect(body).not.toHaveProperty("label");
  });
});
