import { describe, expect, it } from "vitest";
import { cronPreview } from "../../console/src/lib/cron.js";
import { curlCommand, shellQuote } from "../../console/src/lib/curl.js";
import { formOfMessage, messageCurl } from "../../console/src/lib/message-curl.js";
import { attemptTimings, duration as timelineDuration, stateTone } from "../../console/src/lib/timeline.js";
import { groupLogs } from "../../console/src/lib/group-logs.js";
import { buildPublishRequest, emptyPublishForm } from "../../console/src/lib/publish-request.js";
import { href, parseHash } from "../../console/src/lib/hash.js";
import type { LogEntry, WorkflowRun } from "../../console/src/lib/types.js";
import {
  callResult,
  cancelQuery,
  duration,
  failedStepName,
  failureMessage,
  groupTimings,
  runFiltersFrom,
  runQuery,
  runSteps,
  sleepMs,
  stepCount,
  stepOutput,
} from "../../console/src/lib/workflow-runs.js";

/** The console's view logic (console/src/lib): pure functions, tested without a browser. */
describe("cron preview", () => {
  const from = new Date("2026-11-23T20:07:30Z");

  it("lists the next five runs in UTC", () => {
    const preview = cronPreview("*/15 * * * *", 5, from);
    expect(preview.ok && preview.runs.map((d) => d.toISOString())).toEqual([
      "2026-11-23T20:15:00.000Z",
      "2026-11-23T20:30:00.000Z",
      "2026-11-23T20:45:00.000Z",
      "2026-11-23T21:00:00.000Z",
      "2026-11-23T21:15:00.000Z",
    ]);
  });

  it("honours a CRON_TZ prefix and nicknames", () => {
    const berlin = cronPreview("CRON_TZ=Europe/Berlin 0 9 * * *", 1, from);
    expect(berlin.ok && berlin.runs[0]!.toISOString()).toBe("2026-11-24T08:00:00.000Z");
    const daily = cronPreview("@daily", 1, from);
    expect(daily.ok && daily.runs[0]!.toISOString()).toBe("2026-11-24T00:00:00.000Z");
  });

  it("explains what is wrong while typing", () => {
    expect(cronPreview("", 5, from)).toMatchObject({ ok: false });
    expect(cronPreview("* * *", 5, from)).toMatchObject({ ok: false, error: expect.stringContaining("5 fields") });
    expect(cronPreview("61 * * * *", 5, from)).toMatchObject({ ok: false });
    expect(cronPreview("0 0 31 2 *", 5, from)).toMatchObject({ ok: false });
  });
});

describe("publish request and curl", () => {
  it("puts every option in the dialect's headers", () => {
    const request = buildPublishRequest(
      {
        ...emptyPublishForm(),
        destination: "https://example.com/hook?a=1",
        method: "PUT",
        body: '{"x":1}',
        headers: [{ name: "X-Tenant", value: "42" }, { name: " ", value: "ignored" }],
        delay: "30s",
        retries: "2",
        retryDelay: "1000 * pow(2, retried)",
        timeout: "10s",
        callback: "https://example.com/cb",
        failureCallback: "https://example.com/fail",
        deduplicationId: "d-1",
        contentBasedDeduplication: true,
        labels: " a, b ,",
        flowControlKey: "tenant-42",
        flowParallelism: "2",
        flowRate: "10",
        flowPeriod: "1m",
      },
      "Upstash-",
    );
    expect(request.path).toBe("/v2/publish/https://example.com/hook?a=1");
    expect(request.body).toBe('{"x":1}');
    expect(request.headers).toEqual({
      "Content-Type": "application/json",
      "Upstash-Method": "PUT",
      "Upstash-Forward-X-Tenant": "42",
      "Upstash-Delay": "30s",
      "Upstash-Retries": "2",
      "Upstash-Retry-Delay": "1000 * pow(2, retried)",
      "Upstash-Timeout": "10s",
      "Upstash-Callback": "https://example.com/cb",
      "Upstash-Failure-Callback": "https://example.com/fail",
      "Upstash-Deduplication-Id": "d-1",
      "Upstash-Content-Based-Deduplication": "true",
      "Upstash-Label": "a,b",
      "Upstash-Flow-Control-Key": "tenant-42",
      "Upstash-Flow-Control-Value": "parallelism=2, rate=10, period=1m",
    });
  });

  it("enqueues with a queue, schedules with a cron, and a not-before time wins over the delay", () => {
    const base = { ...emptyPublishForm(), destination: "orders", delay: "5m", notBefore: 1_800_000_000_500 };
    const queued = buildPublishRequest({ ...base, queue: "my queue" }, "Svc-");
    expect(queued.path).toBe("/v2/enqueue/my%20queue/orders");
    expect(queued.headers["Svc-Not-Before"]).toBe("1800000000");
    expect(queued.headers["Svc-Delay"]).toBeUndefined();
    const scheduled = buildPublishRequest({ ...base, cron: "0 * * * *", queue: "q" }, "Svc-");
    expect(scheduled.path).toBe("/v2/schedules/orders");
    expect(scheduled.headers).toMatchObject({ "Svc-Cron": "0 * * * *", "Svc-Queue-Name": "q" });
  });

  it("writes a curl command that a shell runs as the same request, without the token", () => {
    const request = buildPublishRequest(
      { ...emptyPublishForm(), destination: "https://example.com/x", body: `it's "quoted"` },
      "Svc-",
    );
    const curl = curlCommand("http://127.0.0.1:8080", request);
    expect(curl).toBe(
      [
        "curl -X POST 'http://127.0.0.1:8080/v2/publish/https://example.com/x'",
        `-H "Authorization: Bearer $FERRY_TOKEN"`,
        "-H 'Content-Type: application/json'",
        `--data-raw 'it'\\''s "quoted"'`,
      ].join(" \\\n  "),
    );
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});

describe("grouping log entries by message", () => {
  const entry = (messageId: string, state: string, time: number, extra: Partial<LogEntry> = {}): LogEntry => ({
    messageId,
    state,
    time,
    url: `https://example.com/${messageId}`,
    ...extra,
  });

  it("keeps the most recently active message first, transitions oldest first, the latest state current", () => {
    const groups = groupLogs([
      entry("b", "DELIVERED", 30),
      entry("a", "RETRY", 25, { labels: ["x"] }),
      entry("b", "ACTIVE", 20),
      entry("a", "ERROR", 15),
      entry("b", "CREATED", 10),
      entry("a", "CREATED", 5),
    ]);
    expect(groups.map((g) => [g.messageId, g.state, g.states.join(">"), g.firstTime, g.lastTime])).toEqual([
      ["b", "DELIVERED", "CREATED>ACTIVE>DELIVERED", 10, 30],
      ["a", "RETRY", "CREATED>ERROR>RETRY", 5, 25],
    ]);
    expect(groups[1]!.labels).toEqual(["x"]);
  });
});

describe("the fragment's query (filters in the URL)", () => {
  it("parses the view, the id and the query, and builds them back", () => {
    const route = parseHash("#/workflows?state=RUN_FAILED&url=http%3A%2F%2F127.0.0.1%3A3000%2Fwf");
    expect(route.view).toBe("workflows");
    expect(route.id).toBeUndefined();
    expect(route.query.get("url")).toBe("http://127.0.0.1:3000/wf");
    expect(parseHash("#/workflows/wfr_1").id).toBe("wfr_1");
    expect(parseHash("").view).toBe("overview");
    expect(href("workflows", undefined, { state: "RUN_FAILED", label: "" })).toBe("#/workflows?state=RUN_FAILED");
    expect(href("workflows", "wfr_a/b")).toBe("#/workflows/wfr_a%2Fb");
  });

  it("turns the run filters into the API's query names", () => {
    const f = runFiltersFrom(new URLSearchParams("state=RUN_STARTED&url=%20http://x/wf%20&label=batch&from=2026-01-02T03:04"));
    const q = runQuery(f);
    expect(q).toMatchObject({ state: "RUN_STARTED", workflowUrl: "http://x/wf", label: "batch" });
    expect(q.fromDate).toBe(new Date("2026-01-02T03:04").getTime());
    expect(q.toDate).toBeUndefined();
  });

  it("cancels only running runs that match: none when the state filter shows ended runs", () => {
    const f = runFiltersFrom(new URLSearchParams("label=nightly"));
    expect(cancelQuery(f)).toMatchObject({ state: "RUN_STARTED", label: "nightly" });
    expect(cancelQuery({ ...f, state: "RUN_STARTED" })).toMatchObject({ state: "RUN_STARTED", label: "nightly" });
    expect(cancelQuery({ ...f, state: "RUN_FAILED" })).toBeUndefined();
  });
});

describe("a workflow run's steps", () => {
  const run: WorkflowRun = {
    workflowRunId: "wfr_1",
    workflowUrl: "http://x/wf",
    workflowState: "RUN_SUCCESS",
    workflowRunCreatedAt: 1000,
    workflowRunCompletedAt: 5000,
    steps: [
      { type: "sequential", steps: [{ stepId: 0, stepType: "Initial", out: "{}", createdAt: 1000 }] },
      { type: "sequential", steps: [{ stepId: 1, stepType: "Run", out: "1", createdAt: 1100 }] },
      { type: "sequential", steps: [{ stepId: 2, stepType: "SleepFor", sleepFor: 2, createdAt: 1150 }] },
      {
        type: "parallel",
        steps: [
          { stepId: 3, stepType: "Run", concurrent: 2, createdAt: 3300 },
          { stepId: 4, stepType: "Run", concurrent: 2, createdAt: 3500 },
        ],
      },
    ],
  };

  it("times each group from the end of the one before; a sleep holds its delay; a parallel group its slowest branch", () => {
    expect(groupTimings(run)).toEqual([
      { start: 1000, end: 1100 },
      { start: 1100, end: 3150 },
      { start: 3150, end: 3500 },
    ]);
    expect(stepCount(run)).toBe(4);
    expect(sleepMs("5m")).toBe(300_000);
    expect(sleepMs("soon")).toBeUndefined();
    expect(duration(350)).toBe("350 ms");
    expect(duration(2050)).toBe("2.05 s");
    expect(duration(125_000)).toBe("2 min 5 s");
  });

  it("leaves out a failed run's next group of failed steps (its DLQ entry shows it); keeps pending work", () => {
    const failedNext = { type: "next" as const, steps: [{ messageId: "msg_1", state: "STEP_FAILED" }] };
    const retrying = { type: "next" as const, steps: [{ messageId: "msg_2", state: "STEP_RETRY" }] };
    const failed: WorkflowRun = { ...run, workflowState: "RUN_FAILED", steps: [...run.steps, failedNext] };
    expect(runSteps(failed).map((g) => g.type)).toEqual(["sequential", "sequential", "parallel"]);
    const started: WorkflowRun = { ...run, workflowState: "RUN_STARTED", steps: [...run.steps, retrying] };
    expect(runSteps(started).at(-1)).toBe(retrying);
  });

  it("reads a call's answer, a wait's event data and a failed step's name and error", () => {
    expect(callResult({ stepType: "Call", out: JSON.stringify({ status: 201, body: "ok", header: {} }) })).toMatchObject({ status: 201, body: "ok" });
    expect(callResult({ stepType: "Call", out: "42" })).toBeUndefined();
    expect(stepOutput({ stepType: "Wait", out: Buffer.from('{"paid":true}').toString("base64") })).toBe('{"paid":true}');
    expect(stepOutput({ stepType: "Run", out: "eyJ9" })).toBe("eyJ9");
    expect(failedStepName({ "Upstash-Error-Step-Name": ["charge"], Date: ["x"] })).toBe("charge");
    expect(failedStepName({ Date: ["x"] })).toBeUndefined();
    expect(failureMessage('{"error":"Error","message":"down"}')).toBe("down");
    expect(failureMessage("plain")).toBe("plain");
  });
});

describe("a message's page (retry, replay, curl, timeline)", () => {
  const entry = (state: string, time: number, extra: Partial<LogEntry> = {}): LogEntry => ({
    time,
    messageId: "msg_1",
    state,
    url: "https://example.com/hook",
    ...extra,
  });

  it("times each attempt from its ACTIVE entry to the ERROR or DELIVERED that ended it", () => {
    const logs = [
      entry("CREATED", 1000),
      entry("ACTIVE", 1000),
      entry("ERROR", 1300),
      entry("RETRY", 1300),
      entry("ACTIVE", 2000),
      entry("ERROR", 2100),
      entry("FAILED", 2100),
    ];
    const t = attemptTimings(logs);
    expect([...t.entries()]).toEqual([
      [2, { attempt: 1, ms: 300 }],
      [5, { attempt: 2, ms: 100 }],
    ]);
    // An attempt still under way has no duration yet; a cancel is no attempt.
    expect(attemptTimings([entry("CREATED", 0), entry("ACTIVE", 5), entry("CANCEL_REQUESTED", 9)]).size).toBe(0);
    expect(timelineDuration(85)).toBe("85 ms");
    expect(timelineDuration(1250)).toBe("1.3 s");
    expect(timelineDuration(125_000)).toBe("2 min 5 s");
  });

  it("colours states like their badges: delivered green, error and retry amber, failed red, cancelled grey", () => {
    expect(["DELIVERED", "ERROR", "RETRY", "FAILED", "CANCELED", "CREATED", "ACTIVE"].map(stateTone)).toEqual([
      "ok",
      "warn",
      "warn",
      "bad",
      "muted",
      "info",
      "info",
    ]);
  });

  it("writes the message's request as a curl command that publishes it again, without the token", () => {
    const created = entry("CREATED", 0, {
      method: "PUT",
      header: { "Content-Type": ["application/json"], "X-Tenant": ["acme"] },
      body: btoa('{"it\'s":1}'),
      maxRetries: 2,
      retryDelayExpr: "1000",
      timeout: 5000,
      labels: ["a", "b"],
      callback: "https://example.com/cb",
      flowControlKey: "tenant",
      parallelism: 2,
      period: 60,
    });
    expect(messageCurl("http://127.0.0.1:8080", created, "Svc-")).toBe(
      [
        "curl -X POST 'http://127.0.0.1:8080/v2/publish/https://example.com/hook'",
        '-H "Authorization: Bearer $FERRY_TOKEN"',
        "-H 'Content-Type: application/json'",
        "-H 'Svc-Method: PUT'",
        "-H 'Svc-Forward-X-Tenant: acme'",
        "-H 'Svc-Retries: 2'",
        "-H 'Svc-Retry-Delay: 1000'",
        "-H 'Svc-Timeout: 5000ms'",
        "-H 'Svc-Callback: https://example.com/cb'",
        "-H 'Svc-Label: a,b'",
        "-H 'Svc-Flow-Control-Key: tenant'",
        "-H 'Svc-Flow-Control-Value: parallelism=2, period=60s'",
        `--data-raw '{"it'\\''s":1}'`,
      ].join(" \\\n  "),
    );
    // A queue's message is enqueued again; a binary body is read from the downloaded file.
    const queued = entry("CREATED", 0, { queueName: "emails", body: btoa("\u00ff\u0000") });
    const command = messageCurl("http://h", queued, "Upstash-");
    expect(command).toContain("'http://h/v2/enqueue/emails/https://example.com/hook'");
    expect(command.endsWith("--data-binary @msg_1.body")).toBe(true);
    expect(formOfMessage(queued, "").contentType).toBe("");
  });
});
