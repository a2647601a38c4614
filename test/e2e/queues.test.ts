import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Behavior, Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

let server: TestServer;
const receivers: Receiver[] = [];

async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  receivers.push(r);
  return r;
}

const json = (value: unknown) => ({ headers: { "content-type": "application/json" }, body: JSON.stringify(value) });

function enqueue(queue: string, url: string, body: string, headers: Record<string, string> = {}) {
  return server.call("POST", `/v2/enqueue/${queue}/${url}`, { headers, body });
}

async function queue(name: string) {
  const res = await server.call("GET", `/v2/queues/${name}`);
  expect(res.status).toBe(200);
  return res.json;
}

beforeAll(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await server.stop();
});

describe("queue management", () => {
  it("upserts, reads, lists and deletes queues", async () => {
    const up = await server.call("POST", "/v2/queues", json({ queueName: "jobs.v1", parallelism: 2 }));
    expect(up.status).toBe(200);
    expect(up.text).toBe("");
    expect(await queue("jobs.v1")).toEqual({
      name: "jobs.v1",
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
      parallelism: 2,
      lag: 0,
      paused: false,
    });
    await server.call("POST", "/v2/queues", json({ queueName: "jobs.v1", parallelism: 4, paused: true }));
    expect(await queue("jobs.v1")).toMatchObject({ parallelism: 4, paused: true });

    const list = await server.call("GET", "/v2/queues");
    expect(list.json.map((q: { name: string }) => q.name)).toContain("jobs.v1");

    expect((await server.call("DELETE", "/v2/queues/jobs.v1")).status).toBe(200);
    expect((await server.call("DELETE", "/v2/queues/jobs.v1")).status).toBe(200);
    const gone = await server.call("GET", "/v2/queues/jobs.v1");
    expect(gone.status).toBe(404);
    expect(gone.json.error).toContain("jobs.v1");
    expect((await server.call("POST", "/v2/queues/jobs.v1/pause")).status).toBe(404);
  });

  it("rejects bad names and values with a 400 naming the field", async () => {
    const badName = await server.call("POST", "/v2/queues", json({ queueName: "no spaces", parallelism: 1 }));
    expect(badName.status).toBe(400);
    expect(badName.json.error).toMatch(/queueName/);
    const missing = await server.call("POST", "/v2/queues", json({ parallelism: 1 }));
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatch(/queueName/);
    const zero = await server.call("POST", "/v2/queues", json({ queueName: "q", parallelism: 0 }));
    expect(zero.status).toBe(400);
    expect(zero.json.error).toMatch(/parallelism/);
    const paused = await server.call("POST", "/v2/queues", json({ queueName: "q", paused: "maybe" }));
    expect(paused.status).toBe(400);
    expect(paused.json.error).toMatch(/paused/);
    const badPath = await server.call("POST", "/v2/enqueue/bad!name/http://127.0.0.1:9/", { body: "x" });
    expect(badPath.status).toBe(400);
    expect(badPath.json.error).toMatch(/queueName/);
    const noDestination = await server.call("POST", "/v2/enqueue/q", { body: "x" });
    expect(noDestination.status).toBe(400);
    expect(noDestination.json.error).toMatch(/destination/);
  });

  it("creates a missing queue on enqueue with parallelism 1", async () => {
    const r = await receiver();
    const res = await enqueue("auto-created", r.url("/auto"), "hi");
    expect(res.status).toBe(200);
    expect(res.json.messageId).toMatch(/^msg_/);
    const got = await r.next();
    expect(got.text).toBe("hi");
    expect(await queue("auto-created")).toMatchObject({ parallelism: 1, paused: false });
    const record = await waitUntil(async () => {
      const logs = await server.call("GET", `/v2/logs?messageId=${res.json.messageId}&state=DELIVERED`);
      return logs.json.logs[0];
    });
    expect(record.queueName).toBe("auto-created");
  });
});

describe("FIFO delivery", () => {
  it("delivers 200 messages of a parallelism-1 queue in order, retries included", async () => {
    const r = await receiver();
    // Every fifth attempt fails; its retry (Svc-Retry-Delay: 0) comes before the next message. Each answer takes a
    // few ms, so messages pile up behind the one in flight while the publishes go on.
    const script: Behavior[] = Array.from({ length: 250 }, (_, k) => ({ status: k % 5 === 2 ? 500 : 200, delayMs: 5 }));
    r.respondWith(...script);
    const headers = { "svc-retries": "3", "svc-retry-delay": "0", "content-type": "text/plain" };
    for (let i = 0; i < 200; i++) {
      const res = await enqueue("fifo", r.url("/fifo"), String(i), headers);
      expect(res.status).toBe(200);
    }
    const requests = await r.waitForCount(250, 60_000);
    const bodies = requests.map((q) => Number(q.text));
    const delivered = bodies.filter((_, k) => k % 5 !== 2);
    expect(delivered).toEqual(Array.from({ length: 200 }, (_, i) => i));
    for (let k = 2; k < 250; k += 5) {
      // The failed attempt is followed by the same message's retry, never by the next message.
      expect(bodies[k + 1]).toBe(bodies[k]);
      expect(requests[k + 1]!.headers["svc-retried"]).toBe(String(Number(requests[k]!.headers["svc-retried"]) + 1));
    }
    expect(r.maxConcurrent).toBe(1);
    await waitUntil(async () => (await queue("fifo")).lag === 0, { what: "lag 0" });
  }, 90_000);

  it("never runs more messages at once than the queue's parallelism", async () => {
    const r = await receiver();
    r.setDefault({ status: 200, delayMs: 150 });
    expect((await server.call("POST", "/v2/queues", json({ queueName: "wide", parallelism: 3 }))).status).toBe(200);
    const items = Array.from({ length: 12 }, (_, i) => ({
      destination: r.url(`/${i}`),
      body: String(i),
      queue: "wide",
    }));
    const res = await server.call("POST", "/v2/batch", json(items));
    expect(res.status).toBe(200);
    await r.waitForCount(12, 20_000);
    expect(r.maxConcurrent).toBe(3);
  });
});

describe("pause and resume", () => {
  it("a paused queue accepts and holds messages; resume releases them in order", async () => {
    const r = await receiver();
    await server.call("POST", "/v2/queues", json({ queueName: "held", parallelism: 1, paused: true }));
    for (let i = 0; i < 5; i++) expect((await enqueue("held", r.url("/held"), String(i))).status).toBe(200);
    expect(await queue("held")).toMatchObject({ lag: 5, paused: true });
    await r.expectQuiet(300);

    expect((await server.call("POST", "/v2/queues/held/resume")).status).toBe(200);
    const got = await r.waitForCount(5);
    expect(got.map((q) => q.text)).toEqual(["0", "1", "2", "3", "4"]);
    expect((await queue("held")).paused).toBe(false);
  });

  it("pausing lets the attempt in flight finish and holds the rest", async () => {
    const r = await receiver();
    r.respondWith({ status: 200, delayMs: 400 });
    await enqueue("midway", r.url("/m"), "0");
    await waitUntil(() => r.maxConcurrent >= 1, { what: "first attempt in flight" });
    expect((await server.call("POST", "/v2/queues/midway/pause")).status).toBe(200);
    expect((await server.call("POST", "/v2/queues/midway/pause")).status).toBe(200); // idempotent
    for (let i = 1; i < 4; i++) await enqueue("midway", r.url("/m"), String(i));
    await r.waitForCount(1);
    await r.expectQuiet(300);
    expect(r.requests).toHaveLength(1);

    await server.call("POST", "/v2/queues/midway/resume");
    const got = await r.waitForCount(4);
    expect(got.map((q) => q.text)).toEqual(["0", "1", "2", "3"]);
  });

  it("a retry of a paused queue's message waits for resume", async () => {
    const r = await receiver();
    r.respondWith({ status: 500, delayMs: 300 });
    await enqueue("retry-held", r.url("/r"), "0", { "svc-retries": "2", "svc-retry-delay": "0" });
    await waitUntil(() => r.maxConcurrent >= 1, { what: "first attempt in flight" });
    await server.call("POST", "/v2/queues/retry-held/pause");
    await r.waitForCount(1);
    await r.expectQuiet(300);
    await server.call("POST", "/v2/queues/retry-held/resume");
    const [, retry] = await r.waitForCount(2);
    expect(retry!.headers["svc-retried"]).toBe("1");
  });
});

describe("cancel and delete", () => {
  it("cancelling a queued message frees its place", async () => {
    const r = await receiver();
    await server.call("POST", "/v2/queues", json({ queueName: "cancels", paused: true }));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await enqueue("cancels", r.url("/c"), String(i))).json.messageId);
    const cancel = await server.call("DELETE", `/v2/messages/${ids[0]}`);
    expect(cancel.json).toEqual({ cancelled: 1 });
    expect((await queue("cancels")).lag).toBe(2);
    await server.call("POST", "/v2/queues/cancels/resume");
    expect((await r.waitForCount(2)).map((q) => q.text)).toEqual(["1", "2"]);
  });

  it("deleting a queue cancels the messages still in it", async () => {
    await server.call("POST", "/v2/queues", json({ queueName: "dropped", paused: true }));
    const id = (await enqueue("dropped", "http://127.0.0.1:9/never", "x")).json.messageId;
    expect((await server.call("DELETE", "/v2/queues/dropped")).status).toBe(200);
    expect((await server.call("GET", `/v2/messages/${id}`)).status).toBe(404);
    const logs = await server.call("GET", `/v2/logs?messageId=${id}&state=CANCELED`);
    expect(logs.json.logs).toHaveLength(1);
  });
});

describe("queue limits", () => {
  let free: TestServer;
  beforeAll(async () => {
    free = await startTestServer({ env: { FERRY_DEFAULT_PLAN: "free" } });
  });
  afterAll(async () => {
    await free.stop();
  });

  it("answers 412 over max_parallelism and max_queues; an existing queue can still be updated", async () => {
    const wide = await free.call("POST", "/v2/queues", json({ queueName: "wide", parallelism: 3 }));
    expect(wide.status).toBe(412);
    expect(wide.json.error).toMatch(/max_parallelism/);

    for (let i = 0; i < 10; i++) {
      expect((await free.call("POST", "/v2/queues", json({ queueName: `q${i}`, parallelism: 1 }))).status).toBe(200);
    }
    const eleventh = await free.call("POST", "/v2/queues", json({ queueName: "q10", parallelism: 1 }));
    expect(eleventh.status).toBe(412);
    expect(eleventh.json.error).toMatch(/max_queues/);
    const enqueueNew = await free.call("POST", "/v2/enqueue/q10/http://127.0.0.1:9/", { body: "x" });
    expect(enqueueNew.status).toBe(412);
    expect((await free.call("GET", "/v2/queues")).json).toHaveLength(10);

    const update = await free.call("POST", "/v2/queues", json({ queueName: "q0", parallelism: 2 }));
    expect(update.status).toBe(200);
    expect((await free.call("GET", "/v2/queues/q0")).json.parallelism).toBe(2);
    const enqueueExisting = await free.call("POST", "/v2/enqueue/q1/http://127.0.0.1:9/", {
      headers: { "svc-retries": "0" },
      body: "x",
    });
    expect(enqueueExisting.status).toBe(200);
  });
});
