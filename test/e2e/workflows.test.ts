import { Client as QstashClient } from "@upstash/qstash";
import { Client, WorkflowNonRetryableError, WorkflowRetryAfterError } from "@upstash/workflow";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { adminEnv, manage } from "../helpers/management.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { WorkflowApp } from "../helpers/workflow-app.js";

/**
 * The official `@upstash/workflow` SDK (pinned) against a real Ferry in the upstash dialect: its own `serve` in a
 * real app on 127.0.0.1, runs started with its own client, every delivery verified by its Receiver
 * (docs/workflows.md).
 */
let server: TestServer;
let app: WorkflowApp;
let client: Client;

beforeAll(async () => {
  server = await startTestServer({
    env: { FERRY_DIALECT: "upstash", FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1", ...adminEnv },
  });
  app = await WorkflowApp.start(server.url, server.token);
  client = new Client({ baseUrl: server.url, token: server.token });
});
afterAll(async () => {
  await app.close();
  await server.stop();
});

async function finished(workflowRunId: string, state = "RUN_SUCCESS") {
  return eventually(async () => {
    const { runs } = await client.logs({ workflowRunId });
    expect(runs[0]?.workflowState).toBe(state);
    return runs[0]!;
  }, 20_000);
}

describe("workflows with the official SDK", () => {
  it("runs sequential steps, a sleep, parallel steps and context.call to the end", async () => {
    const seen: string[] = [];
    const third = app.plain("/third-party", async (request) =>
      Response.json({ echoed: await request.text(), method: request.method }),
    );
    const url = app.workflow("/wf/full", async (context) => {
      const input = context.requestPayload as { n: number };
      const a = await context.run("double", () => {
        seen.push("double");
        return input.n * 2;
      });
      await context.sleep("nap", 1);
      const [b, c] = await Promise.all([
        context.run("plus-one", () => a + 1),
        context.run("plus-two", () => a + 2),
      ]);
      const call = await context.call<{ echoed: string; method: string }>("call", {
        url: third,
        method: "POST",
        body: JSON.stringify({ b, c }),
        headers: { "content-type": "application/json" },
      });
      return { a, b, c, status: call.status, echoed: call.body.echoed, label: context.label };
    });
    const { workflowRunId } = await client.trigger({ url, body: { n: 5 }, label: "first-run" });
    const run = await finished(workflowRunId);
    expect(JSON.parse(run.workflowRunResponse!)).toEqual({
      a: 10,
      b: 11,
      c: 12,
      status: 200,
      echoed: JSON.stringify({ b: 11, c: 12 }),
      label: "first-run",
    });
    expect(seen).toEqual(["double"]);
    expect(run.label).toBe("first-run");
    // The logs carry the fields of the SDK's step JSON, each through the wire shape (src/http/schemas/workflows.ts).
    // A parallel group's results are in the order they were published.
    expect(run.steps.map((g) => [g.type, g.steps.map((s) => s.stepName).sort()])).toEqual([
      ["sequential", ["init"]],
      ["sequential", ["double"]],
      ["sequential", ["nap"]],
      ["parallel", ["plus-one", "plus-two"]],
      ["sequential", ["call"]],
    ]);
    const steps = run.steps.flatMap((g): Record<string, unknown>[] => g.steps);
    const step = (name: string) => steps.find((s) => s.stepName === name);
    expect(step("double")).toMatchObject({ stepId: 1, stepType: "Run", callType: "step", out: "10", concurrent: 1 });
    expect(step("nap")).toMatchObject({ stepId: 2, stepType: "SleepFor", sleepFor: 1, state: "STEP_SUCCESS" });
    expect(step("plus-one")).toMatchObject({ stepType: "Run", out: "11", concurrent: 2 });
    expect(JSON.parse(step("call")!.out as string)).toMatchObject({ status: 200 });
    // Every call of the endpoint succeeded (the SDK answers 500 on a malformed delivery).
    expect(app.calls.filter((c) => c.status >= 300)).toEqual([]);
  });

  it("a failed step fails the run and calls the failure function with the run id and the initial payload", async () => {
    const failures: { runId: string; payload: unknown; status: number; createdAt: number }[] = [];
    let attempts = 0;
    const url = app.workflow(
      "/wf/fails",
      async (context) => {
        await context.run("ok", () => "fine");
        await context.run("boom", () => {
          attempts++;
          throw new Error("step exploded");
        });
      },
      {
        failureFunction: async ({ context, failStatus }) => {
          failures.push({
            runId: context.workflowRunId,
            payload: context.requestPayload,
            status: failStatus,
            createdAt: context.workflowRunCreatedAt,
          });
        },
      },
    );
    const { workflowRunId } = await client.trigger({ url, body: { order: 7 }, retries: 1, retryDelay: "0" });
    const run = await finished(workflowRunId, "RUN_FAILED");
    await eventually(() => expect(failures).toHaveLength(1), 10_000);
    expect(failures[0]).toMatchObject({ runId: workflowRunId, payload: { order: 7 }, status: 500 });
    expect(failures[0]!.createdAt).toBe(run.workflowRunCreatedAt);
    // The trigger's retries (1) applied to the later step: two attempts, not the default four.
    expect(attempts).toBe(2);
    expect(run.dlqId).toBeDefined();
  });

  it("a WorkflowNonRetryableError (489) fails the run at once", async () => {
    let attempts = 0;
    const statuses: number[] = [];
    const url = app.workflow(
      "/wf/non-retryable",
      async (context) => {
        await context.run("once", () => {
          attempts++;
          throw new WorkflowNonRetryableError("give up");
        });
      },
      { failureFunction: async ({ failStatus }) => void statuses.push(failStatus) },
    );
    const { workflowRunId } = await client.trigger({ url, body: "x", retries: 3 });
    await finished(workflowRunId, "RUN_FAILED");
    await eventually(() => expect(statuses).toEqual([489]), 10_000);
    expect(attempts).toBe(1);
  });

  it("a WorkflowRetryAfterError is retried after its Retry-After, not the run's retry delay", async () => {
    let attempts = 0;
    const url = app.workflow("/wf/retry-after", async (context) => {
      return context.run("later", () => {
        attempts++;
        if (attempts === 1) throw new WorkflowRetryAfterError("not yet", 1);
        return "done";
      });
    });
    // A retry delay of 100 s: the run ends within the test's bound only if Retry-After (1 s) wins.
    const { workflowRunId } = await client.trigger({ url, body: "x", retries: 2, retryDelay: "100000" });
    const run = await finished(workflowRunId);
    expect(run.workflowRunResponse).toBe(JSON.stringify("done"));
    expect(attempts).toBe(2);
  });

  it("forwards the trigger's headers to every later step; a second Init with the same id is deduplicated", async () => {
    const headersSeen: (string | null)[] = [];
    let firstSteps = 0;
    const url = app.workflow("/wf/headers", async (context) => {
      await context.run("first", () => {
        firstSteps++;
      });
      await context.run("second", () => void headersSeen.push(context.headers.get("x-trigger")));
    });
    const id = `dedup-${Date.now()}`;
    const { workflowRunId } = await client.trigger({ url, body: "x", workflowRunId: id, headers: { "x-trigger": "yes" } });
    const again = await client.trigger({ url, body: "y", workflowRunId: id, headers: { "x-trigger": "no" } });
    expect(again.workflowRunId).toBe(workflowRunId);
    const run = await finished(workflowRunId);
    expect((run.steps[0]!.steps[0] as { out?: unknown }).out).toBe("x");
    expect(headersSeen).toEqual(["yes"]);
    expect(firstSteps).toBe(1);
  });

  it("refuses a step for a finished or cancelled run with a 400 for the whole batch", async () => {
    const url = app.workflow("/wf/short", async (context) => context.run("only", () => 1));
    const { workflowRunId } = await client.trigger({ url, body: "x" });
    await finished(workflowRunId);
    const qstash = new QstashClient({ baseUrl: server.url, token: server.token });
    const step = {
      url,
      body: JSON.stringify({ stepId: 2, stepName: "late", stepType: "Run", out: "1", concurrent: 1 }),
      headers: {
        "Upstash-Workflow-Init": "false",
        "Upstash-Workflow-RunId": workflowRunId,
        "Upstash-Workflow-Url": url,
        "Upstash-Forward-Upstash-Workflow-Sdk-Version": "1",
      },
    };
    const refused = await qstash.batch([{ url: app.url("/plain"), body: "other" }, step]).catch((e: unknown) => e);
    expect(String(refused)).toMatch(/Upstash-Workflow-RunId.*has ended \(RUN_SUCCESS\)/);
    const res = await server.call("POST", "/v2/batch", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ destination: url, headers: step.headers, body: step.body }]),
    });
    expect(res.status).toBe(400);

    const cancelUrl = app.workflow("/wf/sleepy", async (context) => {
      await context.sleep("long", 3600);
    });
    const cancelled = await client.trigger({ url: cancelUrl, body: "x" });
    await eventually(async () => {
      const { runs } = await client.logs({ workflowRunId: cancelled.workflowRunId });
      expect(runs[0]?.steps.length).toBeGreaterThan(1);
    }, 10_000);
    await client.cancel({ ids: cancelled.workflowRunId });
    await finished(cancelled.workflowRunId, "RUN_CANCELED");
    const late = await server.call("POST", "/v2/batch", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ destination: cancelUrl, headers: { ...step.headers, "Upstash-Workflow-RunId": cancelled.workflowRunId } }]),
    });
    expect(late.status).toBe(400);
    expect(late.json.error).toContain("RUN_CANCELED");
  });

  it("a run started by a plain POST to the endpoint starts: the forwarded Host, Content-Length and Connection are dropped", async () => {
    const done: string[] = [];
    const url = app.workflow(
      "/wf/plain-start",
      async (context) => {
        await context.run("go", () => void done.push(String(context.requestPayload)));
      },
      { receiver: undefined },
    );
    const res = await request(url, { method: "POST", body: "hello", headers: { connection: "keep-alive" } });
    const answer = (await res.body.json()) as { workflowRunId: string };
    expect(res.statusCode).toBe(200);
    await finished(answer.workflowRunId);
    expect(done).toEqual(["hello"]);
  });

  it("context.cancel() cancels the run; client.cancel by URL prefix cancels started runs only", async () => {
    const after: string[] = [];
    const url = app.workflow("/wf/self-cancel", async (context) => {
      await context.run("before", () => 1);
      await context.cancel();
      await context.run("after", () => void after.push(context.workflowRunId));
    });
    const { workflowRunId } = await client.trigger({ url, body: "x" });
    await finished(workflowRunId, "RUN_CANCELED");
    const sleeper = app.workflow("/wf/bulk/a", async (context) => {
      await context.sleep("long", 3600);
    });
    const ids = [
      (await client.trigger({ url: sleeper, body: "1" })).workflowRunId,
      (await client.trigger({ url: sleeper, body: "2" })).workflowRunId,
    ];
    const result = await client.cancel({ urlStartingWith: app.url("/wf/bulk/") });
    expect(result).toEqual({ cancelled: 2 });
    for (const id of ids) await finished(id, "RUN_CANCELED");
    expect(await client.cancel({ urlStartingWith: app.url("/wf/bulk/") })).toEqual({ cancelled: 0 });
    expect(after).toEqual([]);
  });

  it("statistics count the runs and workflow messages; /metrics has runs by state and steps", async () => {
    const { runs } = await client.logs({ count: 100 });
    const stats = await manage(server, "GET", `/v2/qstash/stats/${server.ferry.bootstrap.account.id}?period=1h`, {});
    expect(stats.status).toBe(200);
    const sum = (id: string) =>
      (stats.json.daily_workflow_messages as { id: string; data_points: { y: number }[] }[])
        .find((s) => s.id === id)!
        .data_points.reduce((a, p) => a + p.y, 0);
    expect(sum("workflow_run")).toBe(runs.length);
    // Every run publishes its Init and at least one step.
    expect(sum("workflow_message")).toBeGreaterThanOrEqual(2 * runs.length);
    const month = stats.json.daily_requests as { workflow_run: number }[];
    expect(month.reduce((a, p) => a + p.workflow_run, 0)).toBe(runs.length);

    const metrics = (await server.call("GET", "/metrics", { token: null })).text;
    const byState = (state: string) => runs.filter((r) => r.workflowState === state).length;
    for (const state of ["RUN_SUCCESS", "RUN_FAILED", "RUN_CANCELED"]) {
      expect(metrics).toContain(`ferry_workflow_runs{state="${state}"} ${byState(state)}`);
    }
    expect(metrics).toMatch(/ferry_workflow_steps_total\{outcome="delivered"\} [1-9]/);
    expect(metrics).toContain("ferry_workflow_waiters 0");
  });
});
