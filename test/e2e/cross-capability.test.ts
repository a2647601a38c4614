import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/** Rules that span capabilities: queues with callbacks, schedules into groups and queues, DLQ filters. */
let server: TestServer;
const clock = new OffsetClock();
const receivers: Receiver[] = [];
const receiver = async () => {
  const r = await Receiver.start();
  receivers.push(r);
  return r;
};

beforeAll(async () => {
  server = await startTestServer({ clock, env: { FERRY_SCHEDULER_INTERVAL_MS: "3600000" } });
});
afterAll(async () => {
  await server.stop();
  for (const r of receivers) await r.close();
});

const json = { "content-type": "application/json" };

describe("queues and callbacks", () => {
  it("holds a parallelism-1 queue until the current message's callback is delivered", async () => {
    const dest = await receiver();
    const cb = await receiver();
    cb.respondWith({ status: 500 }); // the first callback attempt fails and retries
    const q = "cb-queue";
    const first = await server.call("POST", `/v2/enqueue/${q}/${dest.url("/first")}`, {
      headers: { "svc-callback": cb.url("/cb"), "svc-callback-retries": "1", "svc-callback-retry-delay": "0" },
      body: "1",
    });
    await server.call("POST", `/v2/enqueue/${q}/${dest.url("/second")}`, { body: "2" });
    expect(first.status).toBe(200);
    await cb.waitForCount(2); // failed callback attempt, then its retry
    const [a, b] = await dest.waitForCount(2);
    expect(a!.url).toBe("/first");
    expect(b!.url).toBe("/second");
    // The second message started only after the callback succeeded.
    expect(b!.at).toBeGreaterThanOrEqual(cb.requests[1]!.at);
    const callback = JSON.parse(cb.requests[1]!.text);
    expect(callback.sourceMessageId).toBe(first.json.messageId);
  });
});

describe("schedules", () => {
  it("fires into a URL group: one message per endpoint with topic and schedule ids", async () => {
    const r1 = await receiver();
    const r2 = await receiver();
    await server.call("POST", "/v2/topics/sched-group/endpoints", {
      headers: json,
      body: JSON.stringify({ endpoints: [{ url: r1.url("/a") }, { url: r2.url("/b"), name: "bee" }] }),
    });
    const created = await server.call("POST", "/v2/schedules/sched-group", {
      headers: { "svc-cron": "* * * * *" },
      body: "s",
    });
    expect(created.status).toBe(200);
    clock.offsetMs += 61_000;
    await server.ferry.loops.scheduler!.runOnce();
    const [got1] = await r1.waitForCount(1);
    const [got2] = await r2.waitForCount(1);
    for (const got of [got1!, got2!]) {
      expect(got.headers["svc-schedule-id"]).toBe(created.json.scheduleId);
      expect(got.headers["svc-topic-name"]).toBe("sched-group");
      expect(got.headers["svc-caller-ip"]).toBe("127.0.0.1");
    }
  });

  it("fires into a queue named by Svc-Queue-Name, which delivers it", async () => {
    const r = await receiver();
    const created = await server.call("POST", `/v2/schedules/${r.url("/queued")}`, {
      headers: { "svc-cron": "* * * * *", "svc-queue-name": "sched-queue" },
      body: "q",
    });
    clock.offsetMs += 61_000;
    await server.ferry.loops.scheduler!.runOnce();
    const [got] = await r.waitForCount(1);
    expect(got!.headers["svc-schedule-id"]).toBe(created.json.scheduleId);
    const queue = await server.call("GET", "/v2/queues/sched-queue");
    expect(queue.status).toBe(200);
  });
});

describe("dead letter queue filters with real entries", () => {
  it("filters by topicName, queueName and scheduleId", async () => {
    const failing = await receiver();
    failing.setDefault({ status: 500 });
    await server.call("POST", "/v2/topics/dlq-group/endpoints", {
      headers: json,
      body: JSON.stringify({ endpoints: [{ url: failing.url("/g") }] }),
    });
    const headers = { "svc-retries": "0" };
    await server.call("POST", "/v2/publish/dlq-group", { headers, body: "g" });
    await server.call("POST", `/v2/enqueue/dlq-queue/${failing.url("/q")}`, { headers, body: "q" });
    const sched = await server.call("POST", `/v2/schedules/${failing.url("/s")}`, {
      headers: { ...headers, "svc-cron": "* * * * *" },
      body: "s",
    });
    clock.offsetMs += 61_000;
    await server.ferry.loops.scheduler!.runOnce();
    const list = (q: string) => server.call("GET", `/v2/dlq?${q}`).then((r) => r.json.messages as { url: string }[]);
    await waitUntil(async () => (await list(`scheduleId=${sched.json.scheduleId}`)).length === 1, {
      what: "DLQ entries",
    });
    expect((await list("topicName=dlq-group")).map((m) => m.url)).toEqual([failing.url("/g")]);
    await waitUntil(async () => (await list("queueName=dlq-queue")).length === 1, { what: "queue DLQ entry" });
    expect((await list("queueName=dlq-queue"))[0]!.url).toBe(failing.url("/q"));
  });

  it("filters by flowControlKey and echoes the key's settings in the record", async () => {
    const failing = await receiver();
    failing.setDefault({ status: 500 });
    const res = await server.call("POST", `/v2/publish/${failing.url("/fc")}`, {
      headers: { "svc-retries": "0", "svc-flow-control-key": "dlq-key", "svc-flow-control-value": "parallelism=2, rate=7, period=1m" },
      body: "f",
    });
    const entries = await waitUntil(async () => {
      const list = (await server.call("GET", "/v2/dlq?flowControlKey=dlq-key")).json.messages as Record<string, unknown>[];
      return list.length === 1 ? list : undefined;
    });
    expect(entries[0]).toMatchObject({ messageId: res.json.messageId, flowControlKey: "dlq-key", parallelism: 2, rate: 7, period: 60 });
    expect((await server.call("GET", "/v2/dlq?flowControlKey=other-key")).json.messages).toEqual([]);
  });
});
