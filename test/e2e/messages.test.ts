import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, TEST_CURRENT_KEY, TEST_NEXT_KEY, type TestServer } from "../helpers/server.js";
import { verifySignature } from "../helpers/signature.js";

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer();
  receiver = await Receiver.start();
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

const delayed = (path: string, headers: Record<string, string> = {}, body = "hello") =>
  server.call("POST", `/v2/publish/${receiver.url(path)}`, { headers: { "svc-delay": "1h", ...headers }, body });

describe("GET /v2/messages/{id}", () => {
  it("returns the message record with every field the reference names", async () => {
    const res = await delayed("/rec?q=1", {
      "content-type": "text/plain",
      "svc-forward-x-one": "1",
      "svc-retries": "2",
      "svc-retry-delay": "pow(2, retried) * 1000",
      "svc-label": "a,b",
      "svc-timeout": "30s",
      "svc-method": "PATCH",
    });
    const rec = (await server.call("GET", `/v2/messages/${res.json.messageId}`)).json;
    expect(rec).toMatchObject({
      messageId: res.json.messageId,
      url: receiver.url("/rec?q=1"),
      method: "PATCH",
      maxRetries: 2,
      body: "hello",
      header: { "Content-Type": ["text/plain"], "X-One": ["1"] },
      retryDelayExpression: "pow(2, retried) * 1000",
      label: "a",
      labels: ["a", "b"],
      callerIP: "127.0.0.1",
    });
    expect(rec.notBefore - rec.createdAt).toBe(3_600_000);
    expect(rec.topicName).toBeUndefined();
  });

  it("shows non-UTF-8 bodies as bodyBase64 and redacts what Svc-Redact-Fields names", async () => {
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x01]);
    const bin = await server.call("POST", `/v2/publish/${receiver.url("/bin")}`, {
      headers: { "svc-delay": "1h" },
      body: binary,
    });
    expect((await server.call("GET", `/v2/messages/${bin.json.messageId}`)).json.bodyBase64).toBe(
      binary.toString("base64"),
    );

    const red = await delayed(
      "/red",
      { "svc-redact-fields": "body, header[X-Secret]", "svc-forward-x-secret": "s3cret" },
      "top",
    );
    const rec = (await server.call("GET", `/v2/messages/${red.json.messageId}`)).json;
    expect(rec.body).toMatch(/^REDACTED:[0-9a-f]{64}$/);
    expect(rec.header["X-Secret"][0]).toMatch(/^REDACTED:/);
    const created = (await server.call("GET", `/v2/events?messageId=${red.json.messageId}`)).json.events[0];
    expect(JSON.stringify(created)).not.toContain("s3cret");
  });

  it("answers 404 for an unknown id", async () => {
    const res = await server.call("GET", "/v2/messages/msg_unknown");
    expect(res.status).toBe(404);
    expect(res.json.error).toMatch(/msg_unknown/);
  });
});

describe("cancel", () => {
  it("cancels one message with {cancelled: 1}, then 404", async () => {
    const { json } = await delayed("/c1");
    const first = await server.call("DELETE", `/v2/messages/${json.messageId}`);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ cancelled: 1 });
    expect((await server.call("DELETE", `/v2/messages/${json.messageId}`)).status).toBe(404);
    const states = (
      await server.call("GET", `/v2/events?messageId=${json.messageId}&order=earliestFirst`)
    ).json.events.map((e: { state: string }) => e.state);
    expect(states).toEqual(["CREATED", "CANCEL_REQUESTED", "CANCELED"]);
  });

  it("bulk-cancels by query filter, honouring count exactly", async () => {
    for (let i = 0; i < 3; i++) await delayed("/bulk-q", { "svc-label": "bulkq" });
    await delayed("/bulk-q", { "svc-label": "other" });
    const one = await server.call("DELETE", "/v2/messages?label=bulkq&count=1");
    expect(one.json).toEqual({ cancelled: 1 });
    const rest = await server.call("DELETE", "/v2/messages?label=bulkq");
    expect(rest.json).toEqual({ cancelled: 2 });
  });

  it("bulk-cancels by JSON body ids and refuses unknown filter keys", async () => {
    const a = (await delayed("/bulk-b")).json.messageId;
    const b = (await delayed("/bulk-b")).json.messageId;
    const res = await server.call("DELETE", "/v2/messages", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messageIds: [a, b, "msg_gone"] }),
    });
    expect(res.json).toEqual({ cancelled: 2 });
    const bad = await server.call("DELETE", "/v2/messages?labell=x");
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/labell/);
  });

  it("cancels everything with no filter at all", async () => {
    await delayed("/all");
    await delayed("/all");
    const res = await server.call("DELETE", "/v2/messages");
    expect(res.json.cancelled).toBeGreaterThanOrEqual(2);
    expect((await server.call("DELETE", "/v2/messages")).json).toEqual({ cancelled: 0 });
  });
});

describe("logs", () => {
  it("pages with cursor and count, omits the cursor on the last page, serves /v2/logs too", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await delayed("/page", { "svc-label": "paging" })).json.messageId);
    const p1 = await server.call("GET", "/v2/events?label=paging&count=2&order=earliestFirst");
    expect(p1.json.events.map((e: { messageId: string }) => e.messageId)).toEqual(ids.slice(0, 2));
    expect(typeof p1.json.cursor).toBe("string");
    const p2 = await server.call("GET", `/v2/events?label=paging&count=2&order=earliestFirst&cursor=${p1.json.cursor}`);
    expect(p2.json.events.map((e: { messageId: string }) => e.messageId)).toEqual(ids.slice(2));
    expect("cursor" in p2.json).toBe(false);
    const logs = await server.call("GET", "/v2/logs?label=paging");
    expect(logs.json.logs).toHaveLength(3);
    expect(logs.json.events).toHaveLength(3);
    expect(logs.json.logs[0].messageId).toBe(ids[2]); // latestFirst by default
  });

  it("filters by state, with IN_PROGRESS and both CANCELED spellings", async () => {
    receiver.respondWith({ status: 500 });
    const failing = await server.call("POST", `/v2/publish/${receiver.url("/ip")}`, {
      headers: { "svc-retries": "1" },
      body: "x",
    });
    const id = failing.json.messageId;
    for (let i = 0; i < 100; i++) {
      const r = await server.call("GET", `/v2/events?messageId=${id}&state=RETRY`);
      if (r.json.events.length > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const inProgress = await server.call("GET", `/v2/events?messageId=${id}&state=IN_PROGRESS`);
    expect(inProgress.json.events.map((e: { state: string }) => e.state).sort()).toEqual(["ACTIVE", "ERROR", "RETRY"]);
    await server.call("DELETE", `/v2/messages/${id}`);
    const canceled = await server.call("GET", `/v2/events?messageId=${id}&state=CANCELLED`);
    expect(canceled.json.events).toHaveLength(1);
    expect(canceled.json.events[0].state).toBe("CANCELED");
  });

  it("rejects a bad count, order or cursor naming the parameter", async () => {
    for (const [q, name] of [
      ["count=0", "count"],
      ["count=1001", "count"],
      ["order=sideways", "order"],
      ["cursor=abc", "cursor"],
    ]) {
      const res = await server.call("GET", `/v2/events?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.json.error).toContain(name);
    }
  });
});

describe("signing keys", () => {
  it("returns current and next, and rotation signs with the former next key", async () => {
    expect((await server.call("GET", "/v2/keys")).json).toEqual({ current: TEST_CURRENT_KEY, next: TEST_NEXT_KEY });
    const rotated = (await server.call("POST", "/v2/keys/rotate")).json;
    expect(rotated.current).toBe(TEST_NEXT_KEY);
    expect(rotated.next).toMatch(/^sig_[1-9A-HJ-NP-Za-km-z]{28}$/);
    await server.call("POST", `/v2/publish/${receiver.url("/rotated")}`, { body: "after rotation" });
    const got = await receiver.waitForPath("/rotated");
    await verifySignature({
      signature: got.headers["svc-signature"],
      key: TEST_NEXT_KEY,
      url: receiver.url("/rotated"),
      body: got.body,
    });
    await expect(
      verifySignature({
        signature: got.headers["svc-signature"],
        key: TEST_CURRENT_KEY,
        url: receiver.url("/rotated"),
        body: got.body,
      }),
    ).rejects.toThrow();
  });
});
