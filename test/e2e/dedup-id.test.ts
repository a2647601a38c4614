import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * One rule for a deduplication id in every channel (docs/messaging.md "Deduplication"): a request header, a query
 * parameter of publish, enqueue, schedules and a batch item's destination, and a batch item's header. Before the fix
 * `?svc-deduplication-id=%00` was accepted while the same value as a batch item header was refused.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.stop());

const target = "http://127.0.0.1:9/never";
const json = { "content-type": "application/json" };
/** Encoded as they travel in a query string, and as the text a JSON header value holds. */
const bad: { name: string; query: string; text: string }[] = [
  { name: "NUL", query: "%00", text: "\u0000" },
  { name: "CR LF", query: "a%0D%0Ab", text: "a\r\nb" },
  { name: "bytes that are not UTF-8", query: "%FF%FE", text: "\ufffd\ufffd" },
  { name: "blank", query: "%20%20", text: "  " },
];

const channels: { name: string; send(query: string, text: string): Promise<{ status: number; error: unknown }> }[] = [
  {
    name: "publish query",
    send: async (q) => {
      const res = await server.call("POST", `/v2/publish/${target}?svc-deduplication-id=${q}`, { body: "x" });
      return { status: res.status, error: res.json?.error };
    },
  },
  {
    name: "enqueue query",
    send: async (q) => {
      const res = await server.call("POST", `/v2/enqueue/dq/${target}?svc-deduplication-id=${q}`, { body: "x" });
      return { status: res.status, error: res.json?.error };
    },
  },
  {
    name: "schedule query",
    send: async (q) => {
      const res = await server.call("POST", `/v2/schedules/${target}?svc-deduplication-id=${q}`, {
        headers: { "svc-cron": "0 0 1 1 *" },
        body: "x",
      });
      return { status: res.status, error: res.json?.error };
    },
  },
  {
    name: "batch item destination query",
    send: async (q) => {
      const res = await server.call("POST", "/v2/batch", {
        headers: json,
        body: JSON.stringify([{ destination: `${target}?svc-deduplication-id=${q}`, body: "x" }]),
      });
      return { status: res.status, error: res.json?.[0]?.error };
    },
  },
  {
    name: "batch item header",
    send: async (_q, text) => {
      const res = await server.call("POST", "/v2/batch", {
        headers: json,
        body: JSON.stringify([{ destination: target, headers: { "Svc-Deduplication-Id": text }, body: "x" }]),
      });
      return { status: res.status, error: res.json?.[0]?.error };
    },
  },
];

describe("deduplication id: one rule in every channel", () => {
  for (const channel of channels) {
    it(`${channel.name}: refused with a 400 naming the deduplication id`, async () => {
      for (const value of bad) {
        const { status, error } = await channel.send(value.query, value.text);
        // A batch answers 200 with the refused item's error in its place (docs/batch.md).
        expect(status, `${value.name}: ${String(error)}`).toBe(channel.name.startsWith("batch") ? 200 : 400);
        expect(error, value.name).toMatch(/^invalid svc-deduplication-id: /i);
      }
    });
  }

  it("an id longer than 1,024 characters is refused in a header and a query alike", async () => {
    const long = "d".repeat(1025);
    const header = await server.call("POST", `/v2/publish/${target}`, { headers: { "svc-deduplication-id": long }, body: "x" });
    const query = await server.call("POST", `/v2/publish/${target}?svc-deduplication-id=${long}`, { body: "x" });
    for (const res of [header, query]) {
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(/^invalid svc-deduplication-id: must be at most 1024 characters/i);
    }
  });

  it("the same valid id deduplicates across channels", async () => {
    const id = "order-7 ü";
    const first = await server.call("POST", `/v2/publish/${target}?svc-deduplication-id=${encodeURIComponent(id)}`, {
      body: "x",
    });
    expect(first.status, first.text).toBe(200);
    const batch = await server.call("POST", "/v2/batch", {
      headers: json,
      body: JSON.stringify([{ destination: target, headers: { "Svc-Deduplication-Id": ` ${id} ` }, body: "x" }]),
    });
    expect(batch.json[0]).toMatchObject({ messageId: first.json.messageId, deduplicated: true });
  });
});
