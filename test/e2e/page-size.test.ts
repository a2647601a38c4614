import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_BODY_MAX_BYTES, PAGE_MAX_BYTES } from "../../src/domain/page-budget.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * A page of logs or DLQ entries is bounded in bytes (docs/reliability.md, "Page size"): before the bound, a page of
 * entries with multi-megabyte bodies embedded all of them whole (tens of megabytes per page).
 */
let server: TestServer;
let receiver: Receiver;
const ENTRIES = 6;
const bodySize = 3 * 1024 * 1024;

beforeAll(async () => {
  server = await startTestServer();
  receiver = await Receiver.start();
  // The destination fails with a 3 MB body: every message lands in the DLQ with two 3 MB bodies.
  receiver.setDefault({ status: 500, body: Buffer.alloc(bodySize, "r") });
  for (let i = 0; i < ENTRIES; i++) {
    const res = await server.call("POST", `/v2/publish/${receiver.url(`/big${i}`)}`, {
      headers: { "Svc-Retries": "0" },
      body: Buffer.alloc(bodySize, "m"),
    });
    expect(res.status, res.text).toBe(200);
  }
  await waitUntil(async () => ((await server.call("GET", "/v2/dlq?count=100")).json.messages?.length ?? 0) >= 1, {
    timeoutMs: 20_000,
  });
}, 60_000);
afterAll(async () => {
  await receiver.close();
  await server.stop();
});

/** Follows cursors to the end, checking each page's size. */
async function allPages(path: string, key: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const res = await server.call("GET", `${path}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(res.status, res.text.slice(0, 200)).toBe(200);
    expect(Buffer.byteLength(JSON.stringify(res.json[key]))).toBeLessThanOrEqual(PAGE_MAX_BYTES);
    out.push(...(res.json[key] as Record<string, unknown>[]));
    cursor = res.json.cursor as string | undefined;
    if (!cursor) return out;
  }
  throw new Error("more than 50 pages");
}

describe("page size", () => {
  it("a DLQ page stays within its byte bound, cuts bodies, and its cursor reaches every entry", async () => {
    await waitUntil(async () => (await allPages("/v2/dlq?count=100", "messages")).length === ENTRIES, {
      timeoutMs: 20_000,
    });
    const entries = await allPages("/v2/dlq?count=100", "messages");
    expect(new Set(entries.map((e) => e.dlqId)).size).toBe(ENTRIES);
    for (const e of entries) {
      expect(e.bodyTruncated).toBe(true);
      expect(e.responseBodyTruncated).toBe(true);
      expect((e.body as string).length).toBe(PAGE_BODY_MAX_BYTES);
    }
    // One entry at a time answers the whole body.
    const one = await server.call("GET", `/v2/dlq/${entries[0]!.dlqId as string}`);
    expect((one.json.body as string).length).toBe(bodySize);
    expect(one.json.bodyTruncated).toBeUndefined();
  });

  it("a logs page stays within its byte bound and its cursor reaches every entry", async () => {
    const logs = await allPages("/v2/logs?count=1000", "logs");
    const failed = logs.filter((l) => l.state === "FAILED");
    expect(failed).toHaveLength(ENTRIES);
    for (const l of failed) expect(l.bodyTruncated).toBe(true);
    expect(new Set(logs.map((l) => `${l.messageId as string}/${l.state as string}`)).size).toBe(logs.length);
  });
});
