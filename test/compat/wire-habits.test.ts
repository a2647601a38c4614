import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * Habits of the Python and Go SDKs (reference §9), sent as raw HTTP in the official SDKs' names to the default
 * server (no FERRY_DIALECT): the names decide (docs/messaging.md "Dialects").
 */
let server: TestServer;
let receiver: Receiver;
const json = { "content-type": "application/json" };

beforeAll(async () => {
  server = await startTestServer({ env: { FERRY_SCHEDULER_INTERVAL_MS: "3600000" } });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

const delayed = async () =>
  (await server.call("POST", `/v2/publish/${receiver.url("/d")}`, { headers: { "upstash-delay": "1h" }, body: "d" }))
    .json.messageId as string;

describe("Python and Go SDK habits", () => {
  it("bulk cancel with a JSON body of ids, and with no body at all (cancel all)", async () => {
    const [a, b] = [await delayed(), await delayed()];
    const res = await server.call("DELETE", "/v2/messages", {
      headers: json,
      body: JSON.stringify({ messageIds: [a, b] }),
    });
    expect(res.json).toEqual({ cancelled: 2 });
    await delayed();
    expect((await server.call("DELETE", "/v2/messages")).json.cancelled).toBeGreaterThanOrEqual(1);
  });

  it("DLQ bulk delete with a JSON body of dlqIds", async () => {
    receiver.setDefault({ status: 500 });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      ids.push(
        (
          await server.call("POST", `/v2/publish/${receiver.url("/f")}`, {
            headers: { "upstash-retries": "0" },
            body: "f",
          })
        ).json.messageId,
      );
    }
    const entries = await waitUntil(async () => {
      const list = (await server.call("GET", "/v2/dlq")).json.messages as { dlqId: string; messageId: string }[];
      const mine = list.filter((m) => ids.includes(m.messageId));
      return mine.length === 2 ? mine : undefined;
    });
    receiver.setDefault({ status: 200 });
    const res = await server.call("DELETE", "/v2/dlq", {
      headers: json,
      body: JSON.stringify({ dlqIds: entries.map((e) => e.dlqId) }),
    });
    expect(res.json.deleted).toBe(2);
  });

  it("/v2/Schedules with a capital S, and pause/resume with PATCH", async () => {
    const created = await server.call("POST", `/v2/Schedules/${receiver.url("/go")}`, {
      headers: { "upstash-cron": "0 * * * *" },
      body: "g",
    });
    expect(created.status).toBe(200);
    const id = created.json.scheduleId;
    expect((await server.call("GET", `/v2/Schedules/${id}`)).json.scheduleId).toBe(id);
    expect((await server.call("PATCH", `/v2/schedules/${id}/pause`)).status).toBe(200);
    expect((await server.call("GET", `/v2/schedules/${id}`)).json.isPaused).toBe(true);
    expect((await server.call("PATCH", `/v2/schedules/${id}/resume`)).status).toBe(200);
    expect((await server.call("GET", `/v2/schedules/${id}`)).json.isPaused).toBe(false);
  });

  it("booleans sent as True/False", async () => {
    const headers = { "upstash-content-based-deduplication": "True", "upstash-delay": "1h" };
    const first = await server.call("POST", `/v2/publish/${receiver.url("/cbd")}`, { headers, body: "same" });
    const second = await server.call("POST", `/v2/publish/${receiver.url("/cbd")}`, { headers, body: "same" });
    expect(second.status).toBe(202);
    expect(second.json.messageId).toBe(first.json.messageId);
    const off = await server.call("POST", `/v2/publish/${receiver.url("/cbd")}`, {
      headers: { ...headers, "upstash-content-based-deduplication": "False" },
      body: "same",
    });
    expect(off.status).toBe(200);
    expect(off.json.messageId).not.toBe(first.json.messageId);
  });

  it("null members in batch items", async () => {
    const res = await server.call("POST", "/v2/batch", {
      headers: json,
      body: JSON.stringify([
        { destination: receiver.url("/null-body"), headers: null, body: null, queue: null },
        { destination: receiver.url("/with-body"), headers: { "Upstash-Delay": "1h" }, body: "b", queue: null },
      ]),
    });
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(2);
    expect(res.json[0].messageId).toMatch(/^msg_/);
  });

  it("trailing slashes on collection routes", async () => {
    expect((await server.call("GET", "/v2/queues/")).status).toBe(200);
    expect((await server.call("GET", "/v2/schedules/")).status).toBe(200);
    expect((await server.call("GET", "/v2/topics/")).status).toBe(200);
    expect((await server.call("GET", "/v2/dlq/")).status).toBe(200);
    expect((await server.call("GET", "/v2/events/")).status).toBe(200);
    // An empty id falls through to the bulk endpoint: DELETE /v2/messages/ cancels everything (reference §0).
    await delayed();
    const res = await server.call("DELETE", "/v2/messages/");
    expect(res.status).toBe(200);
    expect(res.json.cancelled).toBeGreaterThanOrEqual(1);
  });

  it("the Python SDK's Upstash-Callback-<Name> headers reach the callback like Forward-<Name>", async () => {
    const cb = await Receiver.start();
    try {
      await server.call("POST", `/v2/publish/${receiver.url("/py")}`, {
        headers: { "upstash-callback": cb.url("/cb"), "upstash-callback-x-trace": "t1" },
        body: "p",
      });
      const [got] = await cb.waitForCount(1);
      expect(got!.headers["x-trace"]).toBe("t1");
    } finally {
      await cb.close();
    }
  });
});
