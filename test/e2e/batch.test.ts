import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MAX_BATCH_ITEMS } from "../../src/services/batch.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
const receivers: Receiver[] = [];

async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  receivers.push(r);
  return r;
}

const batch = (items: unknown) =>
  server.call("POST", "/v2/batch", { headers: { "content-type": "application/json" }, body: JSON.stringify(items) });

beforeAll(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await server.stop();
});

describe("batch publish", () => {
  it("sends the good items around a bad one and answers in request order", async () => {
    const [r1, r2] = [await receiver(), await receiver()];
    const res = await batch([
      { destination: r1.url("/first"), body: "one" },
      { destination: r2.url("/bad"), headers: { "Svc-Retries": "many" }, body: "two" },
      { destination: "not a url", body: "three" },
      { destination: r2.url("/last"), body: "four" },
    ]);
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(4);
    expect(res.json[0]).toEqual({ messageId: expect.stringMatching(/^msg_/), url: r1.url("/first") });
    expect(res.json[1].error).toMatch(/Svc-Retries/);
    expect(res.json[2].error).toMatch(/destination/);
    expect(res.json[3]).toEqual({ messageId: expect.stringMatching(/^msg_/), url: r2.url("/last") });

    expect((await r1.next()).text).toBe("one");
    const got = await r2.next();
    expect(got.url).toBe("/last");
    expect(got.text).toBe("four");
    expect(got.headers["svc-message-id"]).toBe(res.json[3].messageId);
  });

  it("answers a nested array for a URL group and an error element for an unknown one", async () => {
    const [r1, r2] = [await receiver(), await receiver()];
    await server.call("POST", "/v2/topics/batch-group/endpoints", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ endpoints: [{ url: r1.url("/g") }, { url: r2.url("/g") }] }),
    });
    const res = await batch([
      { destination: "batch-group", body: "fan" },
      { destination: "no-such-group", body: "x" },
      { destination: r1.url("/single"), body: "single" },
    ]);
    expect(res.status).toBe(200);
    expect(res.json[0]).toEqual([
      { messageId: expect.stringMatching(/^msg_/), url: r1.url("/g") },
      { messageId: expect.stringMatching(/^msg_/), url: r2.url("/g") },
    ]);
    expect(res.json[1]).toEqual({ error: expect.stringContaining("no-such-group") });
    expect(res.json[2].url).toBe(r1.url("/single"));
    await r1.waitForCount(2);
    expect((await r2.next()).text).toBe("fan");
  });

  it("accepts nulls and case-insensitive header names", async () => {
    const r = await receiver();
    const res = await batch([
      {
        destination: r.url("/h"),
        headers: { "SVC-FORWARD-X-Mixed": "yes", "Content-Type": "text/plain", "svc-method": "PUT" },
        body: "héllo",
        queue: null,
      },
      { destination: r.url("/empty"), headers: null, body: null, queue: null },
    ]);
    expect(res.status).toBe(200);
    expect(res.json.every((e: { messageId?: string }) => e.messageId?.startsWith("msg_"))).toBe(true);
    const got = await r.waitForCount(2);
    const mixed = got.find((q) => q.url === "/h")!;
    expect(mixed.method).toBe("PUT");
    expect(mixed.headers["x-mixed"]).toBe("yes");
    expect(mixed.headers["content-type"]).toBe("text/plain");
    expect(mixed.text).toBe("héllo");
    expect(got.find((q) => q.url === "/empty")!.text).toBe("");
  });

  it("enqueues items with a queue, creating it, in request order", async () => {
    const r = await receiver();
    r.setDefault({ status: 200, delayMs: 5 });
    const items = Array.from({ length: 20 }, (_, i) => ({
      destination: r.url("/q"),
      body: String(i),
      queue: "batch-q",
    }));
    const res = await batch([
      ...items.slice(0, 10),
      { destination: r.url("/q"), queue: "bad name" },
      ...items.slice(10),
    ]);
    expect(res.status).toBe(200);
    expect(res.json[10].error).toMatch(/queue/);
    const got = await r.waitForCount(20);
    expect(got.map((q) => q.text)).toEqual(items.map((i) => i.body));
    expect(r.maxConcurrent).toBe(1);
    const queue = await server.call("GET", "/v2/queues/batch-q");
    expect(queue.json.parallelism).toBe(1);
  });

  it("refuses a body that is not an array with a 400 naming it", async () => {
    const res = await batch({ destination: "x" });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/body/);
    expect((await batch([])).json).toEqual([]);
    const notObject = await batch(["just a string"]);
    expect(notObject.status).toBe(200);
    expect(notObject.json[0].error).toMatch(/batch item/);
  });

  it("takes a batch at the item limit, in order across its commits, and refuses one item more up front (413)", async () => {
    const r = await receiver();
    // The first 250 (three chunks of the batch's commits) go through a queue; the rest wait a day.
    const queued = 250;
    const items = Array.from({ length: MAX_BATCH_ITEMS }, (_, i) =>
      i < queued
        ? { destination: r.url("/limit"), body: String(i), queue: "limit-q" }
        : { destination: r.url("/later"), body: String(i), headers: { "Svc-Delay": "1d" } },
    );
    const full = await batch(items);
    expect(full.status, full.text.slice(0, 200)).toBe(200);
    expect(full.json).toHaveLength(MAX_BATCH_ITEMS);
    // The queue delivers one at a time: arrival order is the order the chunks were committed in.
    const got = await r.waitForCount(queued, 30_000);
    expect(got.map((q) => Number(q.text))).toEqual(items.slice(0, queued).map((_, i) => i));

    const over = await batch([...items, { destination: r.url("/over"), queue: "limit-q" }]);
    expect(over.status).toBe(413);
    expect(over.json.error).toBe(
      `invalid body: batch too large: more than ${MAX_BATCH_ITEMS} items, the limit per request is ${MAX_BATCH_ITEMS} (send several batches)`,
    );
    // Refused while scanning, before the array is built: 200,000 items answer the same 413.
    const huge = await server.call("POST", "/v2/batch", {
      headers: { "content-type": "application/json" },
      body: `[${'{"destination":"http://127.0.0.1:9/x"},'.repeat(200_000)}{}]`,
    });
    expect(huge.status).toBe(413);
  });
});
