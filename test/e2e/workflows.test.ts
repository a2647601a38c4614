import { Client } from "@upstash/workflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
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
  server = await startTestServer({ env: { FERRY_DIALECT: "upstash", FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1" } });
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
    // Every call of the endpoint succeeded (the SDK answers 500 on a malformed delivery).
    expect(app.calls.filter((c) => c.status >= 300)).toEqual([]);
  });
});
