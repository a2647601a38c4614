import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { newAccount } from "../../src/services/accounts.js";
import { OffsetClock } from "../../src/domain/clock.js";
import { eventually } from "../helpers/eventually.js";
import { startTestServer, TEST_CURRENT_KEY, type TestServer } from "../helpers/server.js";
import { verifySignature } from "../helpers/signature.js";

/**
 * The workflow wire without the SDK (docs/workflows.md): the neutral dialect's `Svc-Workflow-*` names, the history
 * body of each delivery, and every refusal of bad input as a 4xx that names the header, parameter or id, with nothing
 * written.
 */
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer({ env: { FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1" } });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

const json = { "content-type": "application/json" };
const decode = (body: string) =>
  (JSON.parse(body) as { messageId: string; body: string; callType: string }[]).map((e) => ({
    ...e,
    body: Buffer.from(e.body, "base64").toString(),
  }));

describe("workflow wire in the neutral dialect", () => {
  it("Init and a step publish: each delivery carries the history up to its own entry, signed, with Svc-Workflow-RunId", async () => {
    const url = receiver.url("/neutral/wf");
    const init = await server.call("POST", `/v2/publish/${url}`, {
      headers: {
        "Svc-Workflow-RunId": "wfr_neutral",
        "Svc-Workflow-Init": "true",
        "Svc-Workflow-Url": url,
        "Svc-Forward-Svc-Workflow-Sdk-Version": "1",
        "Svc-Forward-X-Trigger": "kept",
        "Svc-Forward-Host": "dropped.example",
      },
      body: "payload",
    });
    expect(init.status).toBe(200);
    const first = await receiver.waitForPath("/neutral/wf");
    expect(first.headers["svc-workflow-runid"]).toBe("wfr_neutral");
    expect(first.headers["svc-workflow-sdk-version"]).toBe("1");
    expect(first.headers["x-trigger"]).toBe("kept");
    expect(first.headers.host).not.toBe("dropped.example");
    expect(decode(first.text)).toEqual([{ messageId: init.json.messageId, body: "payload", callType: "step" }]);
    // Signed over the rewritten body: the history, not the payload.
    await verifySignature({ signature: first.headers["svc-signature"], key: TEST_CURRENT_KEY, url, body: first.body });

    const step = await server.call("POST", "/v2/batch", {
      headers: json,
      body: JSON.stringify([
        {
          destination: url,
          headers: { "Svc-Workflow-RunId": "wfr_neutral", "Svc-Workflow-Init": "false" },
          body: '{"stepId":1,"out":"1"}',
        },
      ]),
    });
    expect(step.status).toBe(200);
    const second = await eventually(() => {
      const got = receiver.requests.filter((r) => r.url === "/neutral/wf");
      expect(got).toHaveLength(2);
      return got[1]!;
    });
    expect(decode(second.text).map((e) => e.body)).toEqual(["payload", '{"stepId":1,"out":"1"}']);
    // The trigger's forwarded headers apply to the later step.
    expect(second.headers["x-trigger"]).toBe("kept");
    const run = await server.call("GET", "/v2/workflows/runs/wfr_neutral");
    expect(run.json).toHaveLength(2);
    expect((await server.call("DELETE", "/v2/workflows/runs/wfr_neutral?cancel=false", { body: '"done"' })).status).toBe(200);
    expect((await server.call("DELETE", "/v2/workflows/runs/wfr_neutral?cancel=false")).status).toBe(400);
    expect((await server.call("GET", "/v2/workflows/runs/wfr_neutral")).status).toBe(404);
  });
});

describe("workflow bad input", () => {
  const publishWith = (headers: Record<string, string>, body = "x") =>
    server.call("POST", `/v2/publish/${receiver.url("/bad/wf")}`, { headers, body });

  it("malformed workflow headers are a 400 naming the header, and create no run", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ "Svc-Workflow-RunId": "bad id", "Svc-Workflow-Init": "true" }, "Svc-Workflow-RunId"],
      [{ "Svc-Workflow-RunId": "wfr_ok1", "Svc-Workflow-Init": "maybe" }, "Svc-Workflow-Init"],
      [{ "Svc-Workflow-RunId": "wfr_ok2", "Svc-Workflow-Init": "true", "Svc-Workflow-Url": "ftp://x" }, "Svc-Workflow-Url"],
      [{ "Svc-Workflow-RunId": "wfr_ok3", "Svc-Workflow-CallType": "sideways" }, "Svc-Workflow-CallType"],
      [{ "Svc-Workflow-RunId": "wfr_ok4", "Svc-Workflow-Init": "true", "Svc-Workflow-Invoke": "true" }, "body"],
    ];
    for (const [headers, field] of cases) {
      const res = await publishWith(headers);
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.json.error).toContain(field);
    }
    for (const id of ["wfr_ok1", "wfr_ok2", "wfr_ok3", "wfr_ok4"]) {
      expect((await server.call("GET", `/v2/workflows/runs/${id}`)).status).toBe(404);
    }
  });

  it("an unknown or another account's run id is refused naming the id", async () => {
    const step = await publishWith({ "Svc-Workflow-RunId": "wfr_nobody", "Svc-Workflow-Init": "false" });
    expect(step.status).toBe(400);
    expect(step.json.error).toContain("Svc-Workflow-RunId");
    expect(step.json.error).toContain("wfr_nobody");
    for (const [method, path] of [
      ["GET", "/v2/workflows/runs/wfr_nobody"],
      ["DELETE", "/v2/workflows/runs/wfr_nobody?cancel=true"],
      ["POST", "/v2/notify/wfr_nobody/evt"],
    ] as const) {
      const res = await server.call(method, path);
      expect(res.status, path).toBe(404);
      expect(res.json.error).toContain("wfr_nobody");
    }
    // Another account's run: the same 404.
    await publishWith({ "Svc-Workflow-RunId": "wfr_mine", "Svc-Workflow-Init": "true" });
    const stranger = newAccount({ customerId: "other@test.local", plan: "free", region: "eu-central-1", now: Date.now() });
    await server.ferry.services.store.accountInsert({ account: stranger });
    expect((await server.call("GET", "/v2/workflows/runs/wfr_mine")).status).toBe(200);
    for (const [method, path] of [
      ["GET", "/v2/workflows/runs/wfr_mine"],
      ["DELETE", "/v2/workflows/runs/wfr_mine?cancel=true"],
    ] as const) {
      const other = await server.call(method, path, { token: stranger.token });
      expect(other.status, path).toBe(404);
      expect(other.json.error).toContain("wfr_mine");
    }
    const foreignStep = await server.call("POST", `/v2/publish/${receiver.url("/bad/wf")}`, {
      token: stranger.token,
      headers: { "Svc-Workflow-RunId": "wfr_mine", "Svc-Workflow-Init": "false" },
      body: "x",
    });
    expect(foreignStep.status).toBe(400);
    expect(foreignStep.json.error).toContain("wfr_mine");
    expect((await server.call("GET", "/v2/workflows/runs/bad%20id")).json.error).toContain("workflowRunId");
    expect((await server.call("DELETE", "/v2/workflows/runs/wfr_mine?cancel=perhaps")).json.error).toContain("cancel");
  });

  it("a wait with a bad timeout or body is a 400 naming it, and registers nothing", async () => {
    await publishWith({ "Svc-Workflow-RunId": "wfr_waits", "Svc-Workflow-Init": "true" });
    const wait = (body: unknown, headers: Record<string, string> = { "Svc-Workflow-RunId": "wfr_waits" }) =>
      server.call("POST", "/v2/wait/evt-bad", { headers: { ...json, ...headers }, body: JSON.stringify(body) });
    const step = { stepId: 1, stepName: "w", stepType: "Wait", concurrent: 1 };
    const url = receiver.url("/bad/wf");
    for (const [body, field] of [
      [{ url, timeout: "soon", step }, "timeout"],
      [{ url, timeout: "0s", step }, "timeout"],
      [{ timeout: "1h", step }, "url"],
      [{ url, timeout: "1h" }, "step"],
      [{ url, timeout: "1h", step, timeoutHeaders: [1] }, "timeoutHeaders"],
    ] as const) {
      const res = await wait(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error).toContain(field);
    }
    const noRun = await wait({ url, timeout: "1h", step }, {});
    expect(noRun.status).toBe(400);
    expect(noRun.json.error).toContain("Svc-Workflow-RunId");
    expect((await server.call("GET", "/v2/waiters/evt-bad")).json).toEqual([]);
  });

  it("bulk cancel and logs refuse bad filters naming them; notify with nobody waiting answers []", async () => {
    expect((await server.call("DELETE", "/v2/workflows/runs?fromDate=yesterday")).json.error).toContain("fromDate");
    expect((await server.call("GET", "/v2/workflows/events?state=RUN_MAYBE")).json.error).toContain("state");
    expect((await server.call("GET", "/v2/workflows/events?count=0")).json.error).toContain("count");
    expect((await server.call("DELETE", "/v2/workflows/runs?workflowRunIds=wfr_none")).json).toEqual({ cancelled: 0 });
    // The SDK's client.notify reads [] as "nobody waits yet" (contract E9), so this is not an error.
    expect((await server.call("POST", "/v2/notify/nobody-waits", { body: "x" })).json).toEqual([]);
  });
});

describe("workflow retention", () => {
  it("the retention loop deletes runs that ended before the log retention, not started ones", async () => {
    const clock = new OffsetClock();
    const own = await startTestServer({ clock, env: { FERRY_LOG_RETENTION_MS: "60000" } });
    try {
      const url = receiver.url("/retention/wf");
      for (const id of ["wfr_old_done", "wfr_still_running"]) {
        const res = await own.call("POST", `/v2/publish/${url}`, {
          headers: { "Svc-Workflow-RunId": id, "Svc-Workflow-Init": "true", "Svc-Delay": "1d" },
          body: "p",
        });
        expect(res.status).toBe(200);
      }
      expect((await own.call("DELETE", "/v2/workflows/runs/wfr_old_done?cancel=false", { body: "r" })).status).toBe(200);
      clock.offsetMs += 120_000;
      await own.ferry.loops.retention!.runOnce();
      const events = await own.call("GET", "/v2/workflows/events?count=100");
      expect(events.json.runs.map((r: { workflowRunId: string }) => r.workflowRunId)).toEqual(["wfr_still_running"]);
      expect((await own.call("DELETE", "/v2/workflows/runs/wfr_old_done?cancel=true")).status).toBe(404);
    } finally {
      await own.stop();
    }
  });
});
