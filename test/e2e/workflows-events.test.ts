import { Client } from "@upstash/workflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { WorkflowApp } from "../helpers/workflow-app.js";

/**
 * Waits, notify (with and without a run id), waiters, wait timeouts, invoke, webhooks, the workflow DLQ and the REST
 * trigger, with the official `@upstash/workflow` SDK against a real Ferry (docs/workflows.md). The account's token
 * is base64 JSON with its UserID, as Ferry generates them: `createWebhook` reads the user id from it.
 */
let server: TestServer;
let app: WorkflowApp;
let client: Client;
let token: string;

beforeAll(async () => {
  server = await startTestServer({ env: { FERRY_DIALECT: "upstash", FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1" } });
  const account = server.ferry.bootstrap.account;
  token = Buffer.from(JSON.stringify({ UserID: account.id, Password: "workflow-test" })).toString("base64");
  await server.ferry.services.store.accountUpdate({ id: account.id, patch: { token } });
  app = await WorkflowApp.start(server.url, token);
  client = new Client({ baseUrl: server.url, token });
});
afterAll(async () => {
  await app.close();
  await server.stop();
});

async function ended(workflowRunId: string, state = "RUN_SUCCESS") {
  return eventually(async () => {
    const { runs } = await client.logs({ workflowRunId });
    expect(runs[0]?.workflowState).toBe(state);
    return runs[0]!;
  }, 20_000);
}

/** Waits until the run has a waiter for `eventId` (its wait step was published). */
async function waiting(eventId: string) {
  return eventually(async () => {
    const waiters = await client.getWaiters({ eventId });
    expect(waiters.length).toBeGreaterThan(0);
    return waiters;
  }, 10_000);
}

describe("workflow events with the official SDK", () => {
  it("waitForEvent resumes on notify; getWaiters lists the waiter; a wait times out", async () => {
    const url = app.workflow("/wf/wait", async (context) => {
      const event = await context.waitForEvent("wait", `order-${String(context.requestPayload)}`, { timeout: "1h" });
      const late = await context.waitForEvent("late", "never", { timeout: 1 });
      return { data: event.eventData, timeout: event.timeout, lateTimeout: late.timeout };
    });
    const { workflowRunId } = await client.trigger({ url, body: "42" });
    const waiters = await waiting("order-42");
    expect(waiters[0]).toMatchObject({ url, timeoutUrl: url });
    const notified = await client.notify({ eventId: "order-42", eventData: { paid: true } });
    expect(notified).toHaveLength(1);
    expect(notified[0]!.messageId).toMatch(/^msg_/);
    const run = await ended(workflowRunId);
    expect(JSON.parse(run.workflowRunResponse!)).toEqual({ data: { paid: true }, timeout: false, lateTimeout: true });
    // The logs show the wait steps the server built (contract §6.4), every field through the wire shape.
    const steps = run.steps.flatMap((g): Record<string, unknown>[] => g.steps);
    const waits = steps.filter((s) => s.stepType === "Wait");
    expect(waits).toMatchObject([
      { stepName: "wait", waitEventId: "order-42", timeout: "1h", waitTimeout: false },
      { stepName: "late", waitEventId: "never", timeout: "1s", waitTimeout: true },
    ]);
    expect(JSON.parse(Buffer.from(waits[0]!.out as string, "base64").toString("utf8"))).toEqual({ paid: true });
    expect(await client.getWaiters({ eventId: "order-42" })).toEqual([]);
    // Nobody waits any more: a notify reaches no one.
    expect(await client.notify({ eventId: "order-42", eventData: "again" })).toEqual([]);
  });

  it("a notify with the run id that comes before the wait is kept (lookback)", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const url = app.workflow("/wf/lookback", async (context) => {
      await context.run("slow", async () => {
        await gate;
      });
      const event = await context.waitForEvent("wait", "early", { timeout: "1h" });
      return event.eventData;
    });
    const { workflowRunId } = await client.trigger({ url, body: "x" });
    expect(await client.notify({ eventId: "early", eventData: "first", workflowRunId })).toEqual([]);
    release();
    const run = await ended(workflowRunId);
    expect(run.workflowRunResponse).toBe(JSON.stringify("first"));
  });

  it("context.invoke runs a child workflow and returns its result to the parent", async () => {
    const childRoute = async (context: Parameters<Parameters<WorkflowApp["workflow"]>[1]>[0]) => {
      const input = context.requestPayload as { n: number };
      return context.run("square", () => input.n * input.n);
    };
    app.workflow("/invoke/child", childRoute);
    const url = app.workflow("/invoke/parent", async (context) => {
      const result = await context.invoke("call child", {
        workflow: { workflowId: "child", routeFunction: childRoute, options: {} } as never,
        body: { n: 7 },
      });
      return result;
    });
    const { workflowRunId } = await client.trigger({ url, body: "go" });
    const run = await ended(workflowRunId);
    expect(JSON.parse(run.workflowRunResponse!)).toEqual({ body: 49, isFailed: false, isCanceled: false });
  });

  it("waitForWebhook resumes when a third party calls the webhook URL", async () => {
    let hook = "";
    const url = app.workflow("/wf/webhook", async (context) => {
      const webhook = await context.createWebhook("make");
      await context.run("publish", () => {
        hook = webhook.webhookUrl;
      });
      const call = await context.waitForWebhook("wait", webhook, "1h");
      return { timeout: call.timeout, body: await call.request?.text(), method: call.request?.method };
    });
    const { workflowRunId } = await client.trigger({ url, body: "x" });
    await eventually(() => expect(hook).toContain(`/v2/workflows/hooks/`), 10_000);
    const res = await fetch(hook, { method: "POST", body: "signed-by-partner" });
    expect(res.status).toBe(200);
    const run = await ended(workflowRunId);
    expect(JSON.parse(run.workflowRunResponse!)).toEqual({ timeout: false, body: "signed-by-partner", method: "POST" });
  });

  it("lists failed runs in the workflow DLQ; restart and resume start new runs; delete removes entries", async () => {
    let failing = true;
    const firstRuns: number[] = [];
    const url = app.workflow("/wf/dlq", async (context) => {
      await context.run("first", () => void firstRuns.push(1));
      return context.run("second", () => {
        if (failing) throw new Error("down");
        return "recovered";
      });
    });
    const runs = [
      await client.trigger({ url, body: "a", retries: 0 }),
      await client.trigger({ url, body: "b", retries: 0 }),
      await client.trigger({ url, body: "c", retries: 0 }),
    ];
    for (const r of runs) await ended(r.workflowRunId, "RUN_FAILED");
    const all = await client.dlq.list();
    const mine = all.messages.filter((m) => runs.some((r) => r.workflowRunId === m.workflowRunId));
    expect(mine).toHaveLength(3);
    const one = await client.dlq.list({ filter: { workflowRunId: runs[0]!.workflowRunId } });
    expect(one.messages.map((m) => m.workflowRunId)).toEqual([runs[0]!.workflowRunId]);
    expect(one.messages[0]).toMatchObject({ workflowUrl: url, responseStatus: 500 });
    const dlqOf = (id: string) => mine.find((m) => m.workflowRunId === id)!.dlqId;

    failing = false;
    const before = firstRuns.length;
    const resumed = await client.dlq.resume({ dlqId: dlqOf(runs[0]!.workflowRunId) });
    expect((await ended(resumed.workflowRunId)).workflowRunResponse).toBe(JSON.stringify("recovered"));
    // Resume kept the successful first step: it did not run again.
    expect(firstRuns.length).toBe(before);
    const restarted = await client.dlq.restart({ dlqId: dlqOf(runs[1]!.workflowRunId) });
    const restartedRun = await ended(restarted.workflowRunId);
    expect((restartedRun.steps[0]!.steps[0] as { out?: unknown }).out).toBe("b");
    expect(firstRuns.length).toBe(before + 1);

    const deleted = await client.dlq.delete(dlqOf(runs[2]!.workflowRunId));
    expect(deleted).toMatchObject({ deleted: 1 });
    const left = await client.dlq.list();
    expect(left.messages.filter((m) => runs.some((r) => r.workflowRunId === m.workflowRunId))).toEqual([]);
  });

  it("run logs: a retrying step in `next` with its errors, then the failed step and the failure function", async () => {
    const handled: string[] = [];
    const url = app.workflow(
      "/wf/logs-fail",
      async (context) => {
        await context.run("boom", () => {
          throw new Error("kaput");
        });
      },
      {
        failureFunction: async ({ failResponse }) => {
          handled.push(failResponse);
          return "handled";
        },
      },
    );
    const { workflowRunId } = await client.trigger({ url, body: "x", retries: 1, retryDelay: "2000" });
    const retrying = await eventually(async () => {
      const { runs } = await client.logs({ workflowRunId });
      const next = runs[0]!.steps.at(-1)!;
      expect(next.type).toBe("next");
      expect(next.steps[0]).toMatchObject({ state: "STEP_RETRY", retries: 1, retryDelay: "2000" });
      return next.steps[0] as { messageId: string; errors: { status: number; body: string; time: number }[] };
    }, 10_000);
    expect(retrying.errors).toHaveLength(1);
    expect(retrying.errors[0]!.status).toBe(500);
    expect(retrying.errors[0]!.body).toContain("kaput");
    const run = await eventually(async () => {
      const r = await ended(workflowRunId, "RUN_FAILED");
      expect(r.failureFunction?.state).toBe("CALLBACK_SUCCESS");
      return r;
    }, 20_000);
    const failedNext = run.steps.at(-1)!;
    expect(failedNext.type).toBe("next");
    expect(failedNext.steps[0]).toMatchObject({ messageId: retrying.messageId, state: "STEP_FAILED", stepName: "boom" });
    expect((failedNext.steps[0] as { errors: unknown[] }).errors).toHaveLength(2);
    expect(handled).toEqual(["kaput"]);
    expect(run.failureFunction).toMatchObject({
      url,
      failStatus: 500,
      failResponse: "kaput",
      dlqId: run.dlqId,
      responseStatus: 200,
    });
    expect(run.failureFunction!.messageId).toMatch(/^msg_/);

    // The DLQ entry reads the same failure callback (contract §6.10), and retrying it runs the failure function again.
    const { messages } = await client.dlq.list({ filter: { workflowRunId } });
    expect(messages[0]!.failureCallbackInfo).toMatchObject({ state: "CALLBACK_SUCCESS", responseStatus: 200 });
    const byState = await client.dlq.list({ filter: { workflowRunId, failureFunctionState: "CALLBACK_SUCCESS" } });
    expect(byState.messages).toHaveLength(1);
    const none = await client.dlq.list({ filter: { workflowRunId, failureFunctionState: "CALLBACK_FAIL" } });
    expect(none.messages).toEqual([]);
    const byCreated = await client.dlq.list({ filter: { workflowCreatedAt: run.workflowRunCreatedAt } });
    expect(byCreated.messages.map((m) => m.workflowRunId)).toEqual([workflowRunId]);
    const retried = await client.dlq.retryFailureFunction({ dlqId: run.dlqId! });
    expect(retried).toEqual({ workflowRunId, workflowCreatedAt: run.workflowRunCreatedAt });
    await eventually(() => expect(handled).toEqual(["kaput", "kaput"]), 10_000);
    // The run's logs now follow the callback sent again.
    await eventually(async () => {
      const { runs } = await client.logs({ workflowRunId });
      expect(runs[0]!.failureFunction).toMatchObject({ state: "CALLBACK_SUCCESS", responseStatus: 200 });
      expect(runs[0]!.failureFunction!.messageId).not.toBe(run.failureFunction!.messageId);
    }, 10_000);
  });

  it("run logs: a sleeping step is STEP_PROGRESS in `next`, STEP_CANCELED after cancel", async () => {
    const url = app.workflow("/wf/logs-cancel", async (context) => {
      await context.sleep("nap", "1h");
    });
    const { workflowRunId } = await client.trigger({ url, body: "x" });
    await eventually(async () => {
      const { runs } = await client.logs({ workflowRunId });
      const next = runs[0]!.steps.at(-1)!;
      expect(next).toMatchObject({ type: "next", steps: [{ state: "STEP_PROGRESS", retries: 3 }] });
      // The sleep's message, not the first delivery still in flight.
      expect(next.steps[0]!.messageId).not.toBe(runs[0]!.steps[0]!.steps[0]!.messageId);
    }, 10_000);
    await client.cancel({ ids: workflowRunId });
    const run = await ended(workflowRunId, "RUN_CANCELED");
    expect(run.steps.at(-1)).toMatchObject({ type: "next", steps: [{ state: "STEP_CANCELED" }] });
  });

  it("POST /v2/trigger to an endpoint that is no workflow SDK fails the run at once", async () => {
    let calls = 0;
    const url = app.plain("/plain/not-sdk", async () => {
      calls++;
      return new Response("ok", { status: 200 });
    });
    const res = await server.call("POST", `/v2/trigger/${url}`, { token, body: "21", headers: { "Upstash-Retries": "2" } });
    expect(res.status).toBe(200);
    const run = await ended(res.json.workflowRunId, "RUN_FAILED");
    const failed = run.steps.at(-1)!;
    expect(failed).toMatchObject({ type: "next", steps: [{ state: "STEP_FAILED" }] });
    const errors = (failed.steps[0] as { errors: { error: string }[] }).errors;
    expect(errors.map((e) => e.error)).toEqual([
      "trigger rest api is only usable with sdk versions after v1.0.0 major version",
    ]);
    // Not retried: a plain endpoint is not called again for a workflow it does not run.
    expect(calls).toBe(1);
    const { messages } = await client.dlq.list({ filter: { workflowRunId: res.json.workflowRunId } });
    expect(messages).toHaveLength(1);
  });

  it("POST /v2/trigger starts a run the SDK takes over", async () => {
    const url = app.workflow("/wf/rest", async (context) => {
      const doubled = await context.run("double", () => Number(context.requestPayload) * 2);
      return { doubled, header: context.headers.get("x-rest") };
    });
    const res = await server.call("POST", `/v2/trigger/${url}`, {
      token,
      body: "21",
      headers: { "Upstash-Forward-X-Rest": "yes" },
    });
    expect(res.status).toBe(200);
    expect(res.json.workflowRunId).toMatch(/^wfr_/);
    expect(typeof res.json.workflowCreatedAt).toBe("number");
    const run = await ended(res.json.workflowRunId);
    expect(JSON.parse(run.workflowRunResponse!)).toEqual({ doubled: 42, header: "yes" });
  });
});
