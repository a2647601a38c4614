import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Regression tests for header names that are JavaScript object keys and for forwarded headers the HTTP client
 * cannot send (docs/reliability.md, "Header maps"). Before the fix the first answered 500 and the second was
 * acknowledged and then failed every attempt into the DLQ.
 */
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer();
  receiver = await Receiver.start();
});
afterAll(async () => {
  await receiver.close();
  await server.stop();
});

const objectKeys = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype"];

describe("header names that are object keys", () => {
  it("publish forwards them and answers 200", async () => {
    for (const key of objectKeys) {
      const res = await server.call("POST", `/v2/publish/${receiver.url(`/publish-${key}`)}`, {
        headers: { [`Svc-Forward-${key}`]: "v1", [`Svc-Callback-Forward-${key}`]: "v2", [`Svc-Failure-Callback-${key}`]: "v3" },
        body: "x",
      });
      expect(res.status, `${key}: ${res.text}`).toBe(200);
    }
    await receiver.waitForCount(objectKeys.length);
    const ctor = receiver.requests.find((r) => r.url === "/publish-constructor");
    expect(ctor?.headers.constructor).toBe("v1");
  });

  it("batch items, enqueue and schedules accept them", async () => {
    const items = objectKeys.map((key) => ({
      destination: receiver.url(`/batch-${key}`),
      body: "b",
      headers: JSON.parse(`{"${key}": "a", "Svc-Forward-${key}": "b", "Svc-Header-Forward": "true"}`) as object,
    }));
    const batch = await server.call("POST", "/v2/batch", {
      headers: { "content-type": "application/json" },
      // Built as text: JSON.stringify of an object literal would lose an own `__proto__` key.
      body: `[${items.map((i) => JSON.stringify({ ...i, headers: undefined }).replace(/}$/, `,"headers":{"__proto__":"p","constructor":"c"}}`)).join(",")}]`,
    });
    expect(batch.status, batch.text).toBe(200);
    for (const item of batch.json as { error?: string }[]) expect(item.error).toBeUndefined();

    const enqueue = await server.call("POST", `/v2/enqueue/q1/${receiver.url("/enqueue")}`, {
      headers: { "Svc-Forward-__proto__": "x", "Svc-Forward-Constructor": "y" },
      body: "e",
    });
    expect(enqueue.status, enqueue.text).toBe(200);

    const schedule = await server.call("POST", `/v2/schedules/${receiver.url("/schedule")}`, {
      headers: { "Svc-Cron": "0 0 1 1 *", "Svc-Forward-__proto__": "x", "Svc-Forward-constructor": "y" },
      body: "s",
    });
    expect(schedule.status, schedule.text).toBe(200);
    const read = await server.call("GET", `/v2/schedules/${schedule.json.scheduleId}`);
    expect(read.status).toBe(200);
  });

  it("URL-group default headers accept them and publishes to the group deliver", async () => {
    const add = await server.call("POST", "/v2/topics/objkeys/endpoints", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ endpoints: [{ url: receiver.url("/group") }] }),
    });
    expect(add.status, add.text).toBe(200);
    const patch = await server.call("PATCH", "/v2/topics/objkeys", {
      headers: { "content-type": "application/json" },
      body: '{"headers": {"__proto__": "p", "constructor": "c", "toString": ["t1", "t2"]}}',
    });
    expect(patch.status, patch.text).toBeLessThan(300);
    const pub = await server.call("POST", "/v2/publish/objkeys", { body: "g" });
    expect(pub.status, pub.text).toBe(200);
    // By path: the earlier tests' batch and enqueue deliveries may still be arriving (a count was satisfied by one).
    const got = await receiver.waitForPath("/group");
    expect(got.text).toBe("g");
  });
});

describe("forwarded headers the HTTP client refuses", () => {
  const refused = ["Host", "Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade", "Expect", "Content-Length", "TE", "Trailer"];

  it("publish answers 400 naming the header, for each refused name and for an empty name", async () => {
    for (const name of refused) {
      const res = await server.call("POST", `/v2/publish/${receiver.url("/never")}`, {
        headers: { [`Svc-Forward-${name}`]: name === "Content-Length" ? "3" : "close" },
        body: "abc",
      });
      expect(res.status, `${name}: ${res.text}`).toBe(400);
      expect(res.json.error).toContain(`svc-forward-${name.toLowerCase()}`);
    }
    const empty = await server.call("POST", `/v2/publish/${receiver.url("/never")}`, {
      headers: { "Svc-Forward-": "x" },
    });
    expect(empty.status).toBe(400);
    expect(empty.json.error).toContain("svc-forward-");
  });

  it("callback headers, batch items and URL-group defaults are refused the same way", async () => {
    const cb = await server.call("POST", `/v2/publish/${receiver.url("/never")}`, {
      headers: { "Svc-Callback": receiver.url("/cb"), "Svc-Callback-Forward-Upgrade": "websocket" },
    });
    expect(cb.status).toBe(400);
    expect(cb.json.error).toContain("svc-callback-forward-upgrade");

    const batch = await server.call("POST", "/v2/batch", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ destination: receiver.url("/never"), headers: { "Svc-Forward-Keep-Alive": "5" } }]),
    });
    expect(batch.status === 400 || batch.json?.[0]?.error !== undefined, batch.text).toBe(true);
    expect(batch.text.toLowerCase()).toContain("keep-alive");

    const ctl = await server.call("POST", "/v2/batch", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ destination: receiver.url("/never"), headers: { "Svc-Forward-X": "a\r\nb" } }]),
    });
    expect(ctl.status === 400 || ctl.json?.[0]?.error !== undefined, ctl.text).toBe(true);

    await server.call("POST", "/v2/topics/hop/endpoints", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ endpoints: [{ url: receiver.url("/never") }] }),
    });
    const patch = await server.call("PATCH", "/v2/topics/hop", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ headers: { "Transfer-Encoding": "chunked" } }),
    });
    expect(patch.status).toBe(400);
    expect(patch.json.error).toContain("Transfer-Encoding");
  });

  it("nothing refused ever reached the destination", () => {
    expect(receiver.requests.filter((r) => r.url === "/never")).toHaveLength(0);
  });
});

describe("many headers", () => {
  it("a header after 1,500 others is honoured (Node's default dropped those past about the 1,000th)", async () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 1500; i++) headers[`h${i.toString(36)}`] = "";
    headers["Svc-Forward-X-Last"] = "kept";
    const res = await server.call("POST", `/v2/publish/${receiver.url("/many-headers")}`, { headers, body: "m" });
    expect(res.status, res.text).toBe(200);
    const got = await receiver.waitForPath("/many-headers");
    expect(got.headers["x-last"]).toBe("kept");
  });
});
