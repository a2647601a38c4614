import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { egressThreadStats } from "../../src/delivery/egress-thread/client.js";
import { OffsetClock } from "../../src/domain/clock.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

let server: TestServer;
let receiver: Receiver;
const clock = new OffsetClock();

beforeAll(async () => {
  server = await startTestServer({ clock });
});
afterAll(async () => {
  await server.stop();
});
// A fresh receiver per test: a test's late retries never reach the next test's assertions.
beforeEach(async () => {
  receiver = await Receiver.start();
});
afterEach(async () => {
  await receiver.close();
});

const publish = (path: string, headers: Record<string, string> = {}, body = "payload") =>
  server.call("POST", `/v2/publish/${receiver.url(path)}`, { headers, body });

async function logStates(messageId: string): Promise<string[]> {
  const res = await server.call("GET", `/v2/events?messageId=${messageId}&order=earliestFirst`);
  return res.json.events.map((e: { state: string }) => e.state);
}

/** Moves the injected clock forward and lets the dispatcher look for due work. */
function advance(ms: number) {
  clock.offsetMs += ms;
  server.ferry.services.dispatcher.nudge();
}

/** Polls `read` until `ok` accepts its value (bounded), then returns that value. */
const readUntil = <T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5000) =>
  waitUntil(
    async () => {
      const v = await read();
      return ok(v) ? v : undefined;
    },
    { timeoutMs },
  );

/** Waits until the message's log holds `count` entries in `state` (the outcome is written after the response). */
async function waitForState(messageId: string, state: string, count = 1) {
  await waitUntil(async () => (await logStates(messageId)).filter((x) => x === state).length >= count, {
    what: `${count} ${state} entries`,
  });
}

describe("retries", () => {
  it("retries after the default backoff (~12 s, then ~2 min) with Svc-Retried counting up", async () => {
    receiver.respondWith({ status: 500 }, { status: 503 });
    const res = await publish("/default-backoff", { "svc-retries": "2" });
    const id = res.json.messageId;
    const first = await receiver.next();
    expect(first.headers["svc-retried"]).toBe("0");
    await waitForState(id, "RETRY", 1);
    // Not yet due: the first retry waits e^2.5 ≈ 12.2 s.
    advance(11_000);
    await receiver.expectQuiet(150);
    advance(1_500);
    const second = await receiver.next();
    expect(second.headers["svc-retried"]).toBe("1");
    expect(second.headers["svc-message-id"]).toBe(id);
    await waitForState(id, "RETRY", 2);
    // Second retry after e^5 ≈ 148 s.
    advance(140_000);
    await receiver.expectQuiet(150);
    advance(10_000);
    const third = await receiver.next();
    expect(third.headers["svc-retried"]).toBe("2");
    const states = await readUntil(
      () => logStates(id),
      (s) => s.includes("DELIVERED"),
    );
    expect(states).toEqual(["CREATED", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "DELIVERED"]);
  });

  it("fails after the last retry and keeps the message for the DLQ", async () => {
    receiver.setDefault({ status: 500, body: "nope" });
    const res = await publish("/always-fails", { "svc-retries": "1", "svc-retry-delay": "0" });
    const states = await readUntil(
      () => logStates(res.json.messageId),
      (s) => s.includes("FAILED"),
    );
    expect(states).toEqual(["CREATED", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "ERROR", "FAILED"]);
    expect((await server.call("GET", `/v2/messages/${res.json.messageId}`)).status).toBe(404);
    const failed = (await server.call("GET", `/v2/events?messageId=${res.json.messageId}&state=FAILED`)).json.events[0];
    expect(failed.responseStatus).toBe(500);
    expect(Buffer.from(failed.responseBody, "base64").toString()).toBe("nope");
    expect(failed.dlqId).toMatch(/^\d+-\d+$/);
  });

  it("uses the Svc-Retry-Delay expression (ms, retried = 0 on the first retry)", async () => {
    receiver.respondWith({ status: 500 }, { status: 500 });
    const res = await publish("/expr", { "svc-retries": "2", "svc-retry-delay": "1000 * (1 + retried) * 10" });
    await receiver.next();
    const retry1 = await readUntil(
      () => server.call("GET", `/v2/events?messageId=${res.json.messageId}&state=RETRY`),
      (r) => r.json.events.length === 1,
    );
    const e1 = retry1.json.events[0];
    expect(e1.nextDeliveryTime - e1.time).toBe(10_000);
    advance(10_000);
    await receiver.next();
    const retry2 = await readUntil(
      () => server.call("GET", `/v2/events?messageId=${res.json.messageId}&state=RETRY&order=latestFirst`),
      (r) => r.json.events.length === 2,
    );
    const e2 = retry2.json.events[0];
    expect(e2.nextDeliveryTime - e2.time).toBe(20_000);
    advance(20_000);
    await receiver.next();
  });

  it("honours Retry-After from the destination", async () => {
    receiver.respondWith({ status: 429, headers: { "retry-after": "30" } });
    const res = await publish("/hint", { "svc-retries": "1" });
    await receiver.next();
    const retry = await readUntil(
      () => server.call("GET", `/v2/events?messageId=${res.json.messageId}&state=RETRY`),
      (r) => r.json.events.length === 1,
    );
    expect(retry.json.events[0].nextDeliveryTime - retry.json.events[0].time).toBe(30_000);
    advance(30_000);
    await receiver.next();
  });

  it("fails at once on 489 with the non-retryable header", async () => {
    receiver.respondWith({ status: 489, headers: { "svc-nonretryable-error": "true" } });
    const res = await publish("/non-retryable", { "svc-retries": "3" });
    await receiver.next();
    const states = await readUntil(
      () => logStates(res.json.messageId),
      (s) => s.includes("FAILED"),
    );
    expect(states).toEqual(["CREATED", "ACTIVE", "ERROR", "FAILED"]);
  });

  it("counts a timeout and a connection reset as failed attempts", async () => {
    receiver.respondWith({ delayMs: 1500 }, { reset: true });
    const res = await publish("/slow", { "svc-retries": "2", "svc-timeout": "1s", "svc-retry-delay": "0" });
    await receiver.waitForCount(1, 10_000);
    const states = await readUntil(
      () => logStates(res.json.messageId),
      (s) => s.includes("DELIVERED"),
      10_000,
    );
    expect(states).toEqual(["CREATED", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "DELIVERED"]);
    const errors = (
      await server.call("GET", `/v2/events?messageId=${res.json.messageId}&state=ERROR&order=earliestFirst`)
    ).json.events;
    expect(errors[0].error).toMatch(/timeout/i);
  });
});

describe("what the destination receives", () => {
  it("uses Svc-Method, keeps the destination query, strips config query params", async () => {
    const res = await server.call(
      "POST",
      `/v2/publish/${receiver.url("/m?a=1&b=two")}&svc-method=PUT&svc-forward-x-q=fromquery&svc_token=${server.token}`,
      { body: "b", token: null },
    );
    expect(res.status).toBe(200);
    const got = await receiver.next();
    expect(got.method).toBe("PUT");
    expect(got.url).toBe("/m?a=1&b=two");
  });

  it("forwards all incoming headers with Svc-Header-Forward, never Authorization", async () => {
    await publish("/hf", { "svc-header-forward": "true", "x-plain": "p", "content-type": "text/plain" });
    const got = await receiver.next();
    expect(got.headers["x-plain"]).toBe("p");
    expect(got.headers["content-type"]).toBe("text/plain");
    expect(got.headers.authorization).toBeUndefined();
    expect(got.headers["svc-header-forward"]).toBeUndefined();
  });

  it("delays with Svc-Delay and Svc-Not-Before (seconds) until the injected clock gets there", async () => {
    const a = await publish("/delay", { "svc-delay": "1h" });
    const notBefore = Math.floor((clock.now() + 7_200_000) / 1000);
    const b = await publish("/not-before", { "svc-not-before": String(notBefore), "svc-delay": "10s" });
    await receiver.expectQuiet(200);
    const rec = (await server.call("GET", `/v2/messages/${b.json.messageId}`)).json;
    expect(rec.notBefore).toBe(notBefore * 1000);
    advance(3_600_000);
    expect((await receiver.next()).headers["svc-message-id"]).toBe(a.json.messageId);
    advance(3_600_000);
    expect((await receiver.next()).headers["svc-message-id"]).toBe(b.json.messageId);
  });
});

describe("the egress thread (docs/threading.md)", () => {
  it("is where deliveries go out; one that dies mid-attempt fails the attempt, which is retried and delivered", async () => {
    const stats = egressThreadStats(server.ferry.http);
    expect(stats).toBeDefined();
    receiver.respondWith({ status: 200, delayMs: 5_000 });
    const res = await publish("/egress-dies", { "svc-retries": "2", "svc-retry-delay": "0" });
    await waitUntil(() => receiver.maxConcurrent === 1, { what: "the attempt at the destination" });
    await stats!.worker!.terminate();

    const got = await receiver.next();
    expect(got.headers["svc-message-id"]).toBe(res.json.messageId);
    expect(got.headers["svc-retried"]).toBe("1");
    await waitForState(res.json.messageId, "DELIVERED");
    const errors = (await server.call("GET", `/v2/events?messageId=${res.json.messageId}&state=ERROR`)).json.events;
    expect(errors.map((e: { error: string }) => e.error)).toEqual([expect.stringMatching(/egress thread exited/)]);
  });
});
