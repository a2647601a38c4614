import { describe, expect, it, vi } from "vitest";
import { clock, DAY_MS, fixedWindows, flowHeaders, flowKey, maxInWindow, newReceiver, publish, publishMany, server } from "./flow-control-fixture.js";

describe("parallelism per key", () => {
  it("never exceeds parallelism 2 under a burst of 200, and the metrics match what the receiver saw", async () => {
    const receiver = await newReceiver();
    receiver.setDefault({ status: 200, delayMs: 15 });
    const key = "par-2";
    const samples: Record<string, unknown>[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const res = await flowKey(server, key);
        if (res.status === 200) samples.push(res.json);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    await publishMany(server, 200, receiver.url("/par"), flowHeaders(key, "parallelism=2"));
    await receiver.waitForCount(200, 60_000);
    sampling = false;
    await sampler;

    expect(receiver.maxConcurrent).toBe(2);
    expect(samples.length).toBeGreaterThan(0);
    for (const s of samples) {
      expect(s.parallelismMax).toBe(2);
      expect((s.parallelismCount as number | undefined) ?? 0).toBeLessThanOrEqual(2);
    }
    // Over the limit, messages sat in the wait list.
    expect(samples.some((s) => ((s.waitListSize as number | undefined) ?? 0) > 0)).toBe(true);

    // Oldest first: each message was published after the one before it finished being accepted, chunk by chunk.
    const order = receiver.requests.map((r) => Number(r.text));
    expect(order.slice(0, 10).every((n) => n < 20)).toBe(true);

    // The last outcomes are written just after the receiver answered: the count drops back to zero. Every field is
    // present, zeros and false included (docs/flow-control.md).
    await vi.waitFor(
      async () => {
        const after = await flowKey(server, key);
        expect(after.status).toBe(200);
        expect(after.json).toEqual({
          flowControlKey: key,
          waitListSize: 0,
          parallelismMax: 2,
          parallelismCount: 0,
          rateMax: 0,
          rateCount: 0,
          ratePeriod: 1,
          ratePeriodStart: 0,
          isPaused: false,
          isPinnedParallelism: false,
          isPinnedRate: false,
        });
      },
      { timeout: 5000, interval: 20 },
    );
  }, 90_000);

  it("retries go through the same limit", async () => {
    const receiver = await newReceiver();
    // The first 10 attempts fail; each retry is due at once (retry delay 0) and waits for the key like the rest.
    receiver.setDefault({ status: 200, delayMs: 30 });
    receiver.respondWith(...Array.from({ length: 10 }, () => ({ status: 500, delayMs: 30 })));
    await publishMany(
      server,
      10,
      receiver.url("/retry"),
      flowHeaders("par-retry", "parallelism=1", { "svc-retries": "10", "svc-retry-delay": "0" }),
    );
    const got = await receiver.waitForCount(20, 30_000);
    expect(got.some((r) => Number(r.headers["svc-retried"]) > 0)).toBe(true);
    expect(receiver.maxConcurrent).toBe(1);
  }, 40_000);
});

describe("rate per period", () => {
  it("starts at most 5 per second with rate=5", async () => {
    const receiver = await newReceiver();
    await publishMany(server, 20, receiver.url("/rate"), flowHeaders("rate-5", "rate=5"));
    const got = await receiver.waitForCount(20, 30_000);

    // Starts as Ferry made them (the ACTIVE entries carry the claim's time): at most 5 in each window, and
    // 20 starts need 4 windows, the last one opening at least 3 periods after the first.
    const logs = await server.call("GET", "/v2/logs?flowControlKey=rate-5&state=ACTIVE");
    const starts: number[] = logs.json.logs.map((e: { time: number }) => e.time);
    expect(starts).toHaveLength(20);
    expect(fixedWindows(starts, 1000)).toEqual([5, 5, 5, 5]);
    expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThanOrEqual(3000);

    // As the receiver saw them, spread over about 3 seconds (tolerance for network jitter). Fixed windows allow up
    // to 5 at the end of one window and 5 more as the next opens, so any second sees at most 10, never 20.
    const arrivals = got.map((r) => r.at);
    expect(maxInWindow(arrivals, 1000)).toBeLessThanOrEqual(10);
    expect(Math.max(...arrivals) - Math.min(...arrivals)).toBeGreaterThanOrEqual(2500);
  }, 40_000);

  it("delivers 3 a day with rate=3, period=1d and holds the rest until the next period", async () => {
    const receiver = await newReceiver();
    const key = "rate-3-day";
    const ids = await publishMany(server, 5, receiver.url("/day"), flowHeaders(key, "rate=3, period=1d"));
    await receiver.waitForCount(3);
    await receiver.expectQuiet(1500);
    expect(receiver.requests).toHaveLength(3);

    const held = await flowKey(server, key);
    expect(held.json).toMatchObject({
      flowControlKey: key,
      waitListSize: 2,
      rateMax: 3,
      rateCount: 3,
      ratePeriod: 86_400,
    });
    expect(Math.abs(held.json.ratePeriodStart - Math.floor(clock.now() / 1000))).toBeLessThanOrEqual(5);
    // The held messages are still there, with their flow-control settings.
    const waiting = receiver.requests.map((r) => r.headers["svc-message-id"]);
    const heldId = ids.find((id) => !waiting.includes(id))!;
    const message = await server.call("GET", `/v2/messages/${heldId}`);
    expect(message.json).toMatchObject({ flowControlKey: key, rate: 3, period: 86_400 });
    expect(message.json.parallelism).toBeUndefined();

    clock.offsetMs = DAY_MS + 1000;
    server.ferry.services.dispatcher.nudge();
    await receiver.waitForCount(5);
    const next = await flowKey(server, key);
    expect(next.json).toMatchObject({ rateCount: 2, rateMax: 3 });
    expect(next.json.waitListSize).toBe(0);
  }, 30_000);

  it("counts a retry against the rate of its key", async () => {
    const receiver = await newReceiver();
    receiver.respondWith({ status: 500 });
    await publish(
      server,
      receiver.url("/rate-retry"),
      flowHeaders("rate-retry", "rate=1, period=1d", { "svc-retries": "1", "svc-retry-delay": "0" }),
    );
    await receiver.waitForCount(1);
    await receiver.expectQuiet(1500);
    clock.offsetMs = DAY_MS + 1000;
    server.ferry.services.dispatcher.nudge();
    const [, retry] = await receiver.waitForCount(2);
    expect(retry!.headers["svc-retried"]).toBe("1");
  }, 30_000);
});
