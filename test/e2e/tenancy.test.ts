import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addCustomer, adminEnv, basic, eventually } from "../helpers/management.js";
import { Receiver } from "../helpers/receiver.js";
import {
  type HttpResult,
  startTestServer,
  TEST_CURRENT_KEY,
  TEST_NEXT_KEY,
  type TestServer,
} from "../helpers/server.js";

/**
 * Tenant isolation on the messaging API: account B's token against every resource of account A gets 404 or 401
 * (or, on list and bulk routes, an answer about B's own resources only), never A's data, and changes nothing of A.
 *
 * A's resources all carry MARKER in their names or URLs, so "never data" is checked on every answer's raw text.
 * Routes that later capabilities add (DLQ, queues, schedules, URL groups, flow control) are in the table already:
 * A's resources for them are created when their routes exist, and B's calls must then find nothing.
 */
const MARKER = "tenant-a-private";
let server: TestServer;
let receiver: Receiver;
let b: Awaited<ReturnType<typeof addCustomer>>;
/** Ids of A's resources; undefined when the capability that makes them is not there yet. */
const a: { messageId?: string; failedId?: string; dlqId?: string; scheduleId?: string } = {};

const aPath = (suffix: string) => receiver.url(`/${MARKER}/${suffix}`);
const exists = (res: HttpResult) => res.status >= 200 && res.status < 300;

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv });
  receiver = await Receiver.start();
  b = await addCustomer(server, "tenant-b@test.local");

  // A pending message (delayed for an hour), with a label and a flow-control key.
  const pending = await server.call("POST", `/v2/publish/${aPath("pending")}`, {
    headers: {
      "svc-delay": "1h",
      "svc-label": MARKER,
      "svc-flow-control-key": MARKER,
      "svc-flow-control-value": "parallelism=1",
    },
    body: `${MARKER} body`,
  });
  expect(pending.status).toBe(200);
  a.messageId = pending.json.messageId;

  // A failed message: in A's logs and dead letter queue.
  receiver.respondWith({ status: 500, body: MARKER });
  const failed = await server.call("POST", `/v2/publish/${aPath("failed")}`, {
    headers: { "svc-retries": "0" },
    body: `${MARKER} failed`,
  });
  a.failedId = failed.json.messageId;
  await eventually(async () => {
    const logs = await server.call("GET", `/v2/logs?messageId=${a.failedId}&state=FAILED`);
    a.dlqId = logs.json.logs[0]?.dlqId;
    return a.dlqId !== undefined;
  }, "A's failed message");

  // A queue, a schedule and a URL group of A.
  const queued = await server.call("POST", `/v2/enqueue/${MARKER}-queue/${aPath("queued")}`, {
    headers: { "svc-delay": "1h" },
  });
  expect(queued.status).toBe(200);
  const schedule = await server.call("POST", `/v2/schedules/${aPath("scheduled")}`, {
    headers: { "svc-cron": "0 0 1 1 *" },
  });
  expect(schedule.status).toBe(200);
  a.scheduleId = schedule.json.scheduleId;
  const group = await server.call("POST", `/v2/topics/${MARKER}-group/endpoints`, {
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ endpoints: [{ name: MARKER, url: aPath("group") }] }),
  });
  expect(group.status).toBe(200);
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

/** [method, path, body?]: every messaging route, aimed at A's resources where it takes an id or a name. */
function table(): [string, string, string?][] {
  const msg = a.messageId ?? "msg_missing";
  const dlq = a.dlqId ?? "0-0";
  const scd = a.scheduleId ?? "scd_missing";
  const queue = `${MARKER}-queue`;
  const group = `${MARKER}-group`;
  return [
    ["GET", `/v2/messages/${msg}`],
    ["DELETE", `/v2/messages/${msg}`],
    ["POST", `/v2/messages/${msg}/retry`],
    ["POST", `/v2/messages/${msg}/replay`],
    ["GET", `/v2/messages/${msg}/actions`],
    ["DELETE", `/v2/messages?messageIds=${msg}`],
    ["DELETE", "/v2/messages", JSON.stringify({ messageIds: [msg] })],
    ["DELETE", `/v2/messages?label=${MARKER}`],
    ["GET", `/v2/logs?messageId=${msg}`],
    ["GET", `/v2/logs?label=${MARKER}`],
    ["GET", "/v2/logs"],
    ["GET", `/v2/events?messageId=${a.failedId}`],
    ["GET", "/v2/events"],
    ["GET", "/v2/keys"],
    ["GET", "/v2/dlq"],
    ["GET", `/v2/dlq/${dlq}`],
    ["GET", `/v2/dlq/count?messageId=${msg}`],
    ["DELETE", `/v2/dlq/${dlq}`],
    ["POST", `/v2/dlq/retry/${dlq}`],
    ["DELETE", `/v2/dlq?dlqIds=${dlq}`],
    ["GET", "/v2/queues"],
    ["GET", `/v2/queues/${queue}`],
    ["POST", `/v2/queues/${queue}/pause`],
    ["POST", `/v2/queues/${queue}/resume`],
    ["DELETE", `/v2/queues/${queue}`],
    ["GET", "/v2/schedules"],
    ["GET", `/v2/schedules/${scd}`],
    ["POST", `/v2/schedules/${scd}/pause`],
    ["PATCH", `/v2/schedules/${scd}/resume`],
    ["DELETE", `/v2/schedules/${scd}`],
    ["GET", "/v2/topics"],
    ["GET", `/v2/topics/${group}`],
    ["DELETE", `/v2/topics/${group}/endpoints`, JSON.stringify({ endpoints: [{ url: aPath("group") }] })],
    ["DELETE", `/v2/topics/${group}`],
    ["POST", `/v2/publish/${group}`, "from B"],
    ["GET", "/v2/flowControl"],
    ["GET", `/v2/flowControl/${MARKER}`],
    ["POST", `/v2/flowControl/${MARKER}/reset`],
    ["GET", "/v2/globalParallelism"],
  ];
}

describe("account B against account A's resources", () => {
  it("never answers with A's data, whatever the route", async () => {
    expect(a.messageId).toBeDefined();
    expect(a.dlqId).toBeDefined();
    for (const [method, path, body] of table()) {
      const res = await server.call(method, path, {
        token: b.token,
        body,
        headers: body ? { "content-type": "application/json" } : {},
      });
      const what = `${method} ${path} -> ${res.status} ${res.text.slice(0, 200)}`;
      if (!exists(res)) {
        // A refusal: 404 (not found for B), 401, or 400/405; its body is the error alone (which may echo B's input).
        expect([400, 401, 404, 405], what).toContain(res.status);
        expect(Object.keys(res.json ?? {}), what).toEqual(["error"]);
        continue;
      }
      // A 2xx answer is about B's own resources: A's data never appears in it.
      expect(res.text, what).not.toContain(MARKER);
      expect(res.text, what).not.toContain(a.messageId!);
      expect(res.text, what).not.toContain(a.failedId!);
      if (method !== "GET" && res.json && typeof res.json === "object") {
        // A bulk call by B may answer 2xx, but it touched nothing: it counts zero.
        for (const key of ["cancelled", "deleted"]) if (key in res.json) expect(res.json[key], what).toBe(0);
      }
    }
  });

  it("answers 404 for A's message by id, whether read or cancelled", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await server.call(method, `/v2/messages/${a.messageId}`, { token: b.token });
      expect(res.status).toBe(404);
      expect(res.json.error).toBe(`message ${a.messageId} not found`);
    }
  });

  it("returns B's own signing keys, never A's, and B's key rotation leaves A's keys alone", async () => {
    const keys = await server.call("GET", "/v2/keys", { token: b.token });
    expect(keys.json.current).not.toBe(TEST_CURRENT_KEY);
    expect(keys.json.next).not.toBe(TEST_NEXT_KEY);
    expect((await server.call("POST", "/v2/keys/rotate", { token: b.token })).status).toBe(200);
    expect((await server.call("GET", "/v2/keys")).json).toEqual({ current: TEST_CURRENT_KEY, next: TEST_NEXT_KEY });
  });

  it("left every resource of A in place", async () => {
    const message = await server.call("GET", `/v2/messages/${a.messageId}`);
    expect(message.status).toBe(200);
    expect(message.json.body).toBe(`${MARKER} body`);
    const logs = await server.call("GET", `/v2/logs?messageId=${a.messageId}`);
    expect(logs.json.logs.map((l: { state: string }) => l.state)).toEqual(["CREATED"]);
    const dlq = await server.call("GET", `/v2/dlq/${a.dlqId}`);
    expect(dlq.status).toBe(200);
    expect(dlq.text).toContain(MARKER);
    expect((await server.call("GET", `/v2/schedules/${a.scheduleId}`)).json.isPaused).toBeFalsy();
    expect((await server.call("GET", `/v2/queues/${MARKER}-queue`)).json).toMatchObject({ paused: false, lag: 1 });
    expect((await server.call("GET", `/v2/topics/${MARKER}-group`)).json.endpoints).toHaveLength(1);
    expect((await server.call("GET", `/v2/flowControl/${MARKER}`)).status).toBe(200);
  });

  it("refuses tokens across the two APIs: Bearer on management, Basic on messaging", async () => {
    for (const token of [server.token, b.token]) {
      const res = await server.call("GET", "/v2/msgsvc/user", { token });
      expect(res.status).toBe(401);
    }
    const res = await server.call("GET", `/v2/messages/${a.messageId}`, {
      token: null,
      headers: { authorization: basic(b.credentials) },
    });
    expect(res.status).toBe(401);
  });

  it("refuses a rotated token of B with 401 on every route of the table", async () => {
    const oldToken = b.token;
    const rotated = await server.call("POST", `/v2/msgsvc/rotate-token/${b.accountId}`, {
      token: null,
      headers: { authorization: basic(b.credentials) },
    });
    expect(rotated.status).toBe(200);
    for (const [method, path, body] of table()) {
      const res = await server.call(method, path, { token: oldToken, body });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });
});
