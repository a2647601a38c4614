import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestServer, type TestServer, testStore } from "../helpers/server.js";
import { FLOW_KEY_FIELDS } from "../helpers/flow-keys.js";
import { clock, flowHeaders, flowKey, newReceiver, publish, publishMany, server } from "./flow-control-fixture.js";

describe("flow-control endpoints", () => {
  it("reset releases messages held by the rate", async () => {
    const receiver = await newReceiver();
    const key = "reset-me";
    await publishMany(server, 4, receiver.url("/reset"), flowHeaders(key, "rate=2, period=1d"));
    await receiver.waitForCount(2);
    await receiver.expectQuiet(1000);
    expect((await flowKey(server, key)).json).toMatchObject({ rateCount: 2, waitListSize: 2 });

    const res = await server.call("POST", `/v2/flowControl/${key}/reset`);
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
    await receiver.waitForCount(4);
    expect((await flowKey(server, key)).json).toMatchObject({ rateCount: 2 });
    expect((await flowKey(server, key)).json.waitListSize).toBe(0);
  }, 30_000);

  it("resetRate starts a new period now", async () => {
    const receiver = await newReceiver();
    const key = "reset-rate";
    await publishMany(server, 2, receiver.url("/reset-rate"), flowHeaders(key, "rate=1, period=1d"));
    await receiver.waitForCount(1);
    clock.offsetMs = 60_000; // a minute later, still inside the day
    expect((await server.call("POST", `/v2/flowControl/${key}/resetRate`)).status).toBe(200);
    await receiver.waitForCount(2);
    const after = (await flowKey(server, key)).json;
    expect(after.rateCount).toBe(1);
    expect(Math.abs(after.ratePeriodStart - Math.floor(clock.now() / 1000))).toBeLessThanOrEqual(5);
  }, 30_000);

  it("pause holds new messages in the wait list and resume releases them", async () => {
    const receiver = await newReceiver();
    const key = "pausable";
    await publish(server, receiver.url("/pause"), flowHeaders(key, "parallelism=5"));
    await receiver.waitForCount(1);

    expect((await server.call("POST", `/v2/flowControl/${key}/pause`)).status).toBe(200);
    await publishMany(server, 3, receiver.url("/pause"), flowHeaders(key, "parallelism=5"));
    await receiver.expectQuiet(1500);
    expect((await flowKey(server, key)).json).toMatchObject({ isPaused: true, waitListSize: 3 });

    expect((await server.call("POST", `/v2/flowControl/${key}/resume`)).status).toBe(200);
    await receiver.waitForCount(4);
    const after = (await flowKey(server, key)).json;
    expect(after.isPaused).toBe(false);
    expect(after.waitListSize).toBe(0);
  }, 30_000);

  it("pin fixes the configuration against incoming messages; unpin lets them change it again", async () => {
    const receiver = await newReceiver();
    receiver.setDefault({ status: 200, delayMs: 40 });
    const key = "pinned";
    expect((await server.call("POST", `/v2/flowControl/${key}/pin?parallelism=1&rate=100&period=60`)).status).toBe(200);
    expect((await flowKey(server, key)).json).toMatchObject({
      parallelismMax: 1,
      rateMax: 100,
      ratePeriod: 60,
      isPinnedParallelism: true,
      isPinnedRate: true,
    });
    await publishMany(server, 6, receiver.url("/pin"), flowHeaders(key, "parallelism=5, rate=1000"));
    await receiver.waitForCount(6);
    expect(receiver.maxConcurrent).toBe(1);
    expect((await flowKey(server, key)).json).toMatchObject({ parallelismMax: 1, rateMax: 100, ratePeriod: 60 });

    expect((await server.call("POST", `/v2/flowControl/${key}/unpin?parallelism=true`)).status).toBe(200);
    const half = (await flowKey(server, key)).json;
    expect(half.isPinnedParallelism).toBe(false);
    expect(half).toMatchObject({ parallelismMax: 1, isPinnedRate: true });
    await publish(server, receiver.url("/pin"), flowHeaders(key, "parallelism=5, rate=1000"));
    await receiver.waitForCount(7);
    expect((await flowKey(server, key)).json).toMatchObject({ parallelismMax: 5, rateMax: 100, ratePeriod: 60 });

    expect((await server.call("POST", `/v2/flowControl/${key}/unpin`)).status).toBe(200);
    expect((await flowKey(server, key)).json.isPinnedRate).toBe(false);
  }, 30_000);

  it("lists keys as a bare array, filtered by a search substring", async () => {
    const receiver = await newReceiver();
    await publish(server, receiver.url("/list"), flowHeaders("list-alpha", "parallelism=3"));
    await publish(server, receiver.url("/list"), flowHeaders("list-beta", "rate=4, period=1m"));
    await receiver.waitForCount(2);
    const all = await server.call("GET", "/v2/flowControl");
    expect(all.status).toBe(200);
    expect(Array.isArray(all.json)).toBe(true);
    const names = all.json.map((k: { flowControlKey: string }) => k.flowControlKey);
    expect(names).toEqual(expect.arrayContaining(["list-alpha", "list-beta"]));
    // Each entry carries every field, zeros and false included (list-alpha has no rate, list-beta no parallelism).
    for (const entry of all.json as Record<string, unknown>[]) {
      expect(Object.keys(entry).sort()).toEqual([...FLOW_KEY_FIELDS].sort());
      for (const field of FLOW_KEY_FIELDS.slice(1, 8)) expect(typeof entry[field], field).toBe("number");
      for (const field of FLOW_KEY_FIELDS.slice(8)) expect(typeof entry[field], field).toBe("boolean");
    }

    const some = await server.call("GET", "/v2/flowControl?search=LIST-");
    expect(some.json.map((k: { flowControlKey: string }) => k.flowControlKey)).toEqual(["list-alpha", "list-beta"]);
    expect(some.json[1]).toMatchObject({ flowControlKey: "list-beta", rateMax: 4, ratePeriod: 60 });
    expect((await server.call("GET", "/v2/flowControl?search=nothing-like-it")).json).toEqual([]);
    expect((await server.call("GET", "/v2/flowControl/")).status).toBe(200);
  });

  it("answers 404 for an unknown key and 400 naming the field for bad input", async () => {
    expect((await flowKey(server, "no-such-key")).status).toBe(404);
    for (const action of ["reset", "resetRate", "pause", "resume", "unpin"]) {
      const res = await server.call("POST", `/v2/flowControl/no-such-key/${action}`);
      expect(res.status, action).toBe(404);
      expect(res.json.error).toMatch(/flow control key no-such-key not found/);
    }
    const bad: [string, RegExp][] = [
      ["pin?parallelism=abc", /^invalid parallelism/],
      ["pin?rate=-1", /^invalid rate/],
      ["pin?period=8d&rate=1", /^invalid period/],
      ["pin", /^invalid parallelism/],
      ["pin?period=10", /^invalid rate/],
      ["pin?parallelism=1&speed=2", /^invalid speed/],
      ["unpin?rate=maybe", /^invalid rate/],
    ];
    for (const [path, error] of bad) {
      const res = await server.call("POST", `/v2/flowControl/par-2/${path}`);
      expect(res.status, path).toBe(400);
      expect(res.json.error, path).toMatch(error);
    }
    expect((await server.call("GET", "/v2/flowControl?serch=x")).status).toBe(400);
  });

  it("rejects bad flow-control values with 400 naming Svc-Flow-Control-Value", async () => {
    const receiver = await newReceiver();
    const url = receiver.url("/bad");
    for (const value of ["parallelism=0", "rate=abc", "period=1m", "rate=1, period=8d", "speed=3", "rate"]) {
      const res = await server.call("POST", `/v2/publish/${url}`, { headers: flowHeaders("bad", value), body: "x" });
      expect(res.status, value).toBe(400);
      expect(res.json.error, value).toMatch(/^invalid Svc-Flow-Control-Value/);
    }
    const noValue = await server.call("POST", `/v2/publish/${url}`, {
      headers: { "svc-flow-control-key": "bad" },
      body: "x",
    });
    expect(noValue.status).toBe(400);
    expect(noValue.json.error).toMatch(/Svc-Flow-Control-Value/);
    const noKey = await server.call("POST", `/v2/publish/${url}`, {
      headers: { "svc-flow-control-value": "rate=1" },
      body: "x",
    });
    expect(noKey.status).toBe(400);
    expect(noKey.json.error).toMatch(/Svc-Flow-Control-Key/);
    // Query-parameter configuration works the same way.
    const viaQuery = await server.call(
      "POST",
      `/v2/publish/${url}?svc-flow-control-key=bad&svc-flow-control-value=rate%3D0`,
      { body: "x" },
    );
    expect(viaQuery.status).toBe(400);
    expect(viaQuery.json.error).toMatch(/^invalid Svc-Flow-Control-Value/);
    await receiver.expectQuiet(200);
  });
});

describe("filters and records", () => {
  it("filters logs and bulk cancel by flowControlKey; records echo the flow-control settings", async () => {
    const receiver = await newReceiver();
    const key = "filtered";
    await publish(server, receiver.url("/f"), flowHeaders(key, "parallelism=2, rate=10, period=1h"));
    await publish(server, receiver.url("/f"), { "svc-forward-x": "no-key" });
    await receiver.waitForCount(2);

    // The outcome is written just after the receiver answered: wait for the DELIVERED entry, not for the arrival.
    const logs = await vi.waitFor(
      async () => {
        const res = await server.call("GET", `/v2/logs?flowControlKey=${key}`);
        expect(res.status).toBe(200);
        expect(res.json.logs.map((l: { state: string }) => l.state)).toContain("DELIVERED");
        return res;
      },
      { timeout: 5000, interval: 20 },
    );
    expect(logs.json.logs.map((l: { state: string }) => l.state).sort()).toEqual(["ACTIVE", "CREATED", "DELIVERED"]);
    for (const entry of logs.json.logs) {
      expect(entry).toMatchObject({ flowControlKey: key, parallelism: 2, rate: 10, period: 3600 });
    }
    const events = await server.call("GET", `/v2/events?flowControlKey=${key}&flowControlKey=other`);
    expect(events.json.events.length).toBe(logs.json.logs.length);

    // Held messages (paused key) can be cancelled by key; others are left alone.
    expect((await server.call("POST", `/v2/flowControl/${key}/pause`)).status).toBe(200);
    const held = await publishMany(
      server,
      3,
      receiver.url("/f"),
      flowHeaders(key, "parallelism=2, rate=10, period=1h"),
    );
    const other = await publish(server, receiver.url("/f"), flowHeaders("filtered-other", "rate=1, period=1d"));
    const again = await publish(server, receiver.url("/f"), flowHeaders("filtered-other", "rate=1, period=1d"));
    await receiver.waitForCount(3);
    const record = await server.call("GET", `/v2/messages/${held[0]}`);
    expect(record.json).toMatchObject({ flowControlKey: key, parallelism: 2, rate: 10, period: 3600 });

    const cancel = await server.call("DELETE", `/v2/messages?flowControlKey=${key}`);
    expect(cancel.json).toEqual({ cancelled: 3 });
    expect((await flowKey(server, key)).json.waitListSize).toBe(0);
    expect((await server.call("GET", `/v2/messages/${again}`)).status).toBe(200);
    expect(other).toMatch(/^msg_/);
    expect((await server.call("DELETE", `/v2/messages/${again}`)).status).toBe(200);
    expect((await server.call("POST", `/v2/flowControl/${key}/resume`)).status).toBe(200);
  }, 30_000);
});

describe("global parallelism", () => {
  let free: TestServer;
  beforeAll(async () => {
    // The free plan allows 10 deliveries in flight across the account.
    free = await startTestServer({ env: { FERRY_DEFAULT_PLAN: "free" } });
  });
  afterAll(async () => {
    await free.stop();
  });

  it("bounds deliveries in flight across all keys and the fast path", async () => {
    const receiver = await newReceiver();
    receiver.setDefault({ status: 200, delayMs: 60 });
    const empty = await free.call("GET", "/v2/globalParallelism");
    expect(empty.json).toEqual({ parallelismMax: 10 });

    const counts: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const res = await free.call("GET", "/v2/globalParallelism");
        counts.push(res.json.parallelismCount ?? 0);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    // Unkeyed messages take the fast path; keyed ones go through the claim. Both count.
    await Promise.all([
      publishMany(free, 40, receiver.url("/g"), {}),
      publishMany(free, 20, receiver.url("/g"), flowHeaders("g-a", "parallelism=8")),
      publishMany(free, 20, receiver.url("/g"), flowHeaders("g-b", "rate=100")),
    ]);
    await receiver.waitForCount(80, 30_000);
    sampling = false;
    await sampler;

    expect(receiver.maxConcurrent).toBe(10);
    expect(Math.max(...counts)).toBeLessThanOrEqual(10);
    expect(Math.max(...counts)).toBeGreaterThan(0);
    // The last outcomes are written just after the receiver answered: the count drops back to zero (omitted).
    await vi.waitFor(async () => expect((await free.call("GET", "/v2/globalParallelism")).json).toEqual({ parallelismMax: 10 }), {
      timeout: 5000,
      interval: 20,
    });
  }, 40_000);
});

// PostgreSQL only: a SQLite file takes one process (docs/operations.md, "One process per SQLite file").
describe.runIf(testStore === "postgres")("several nodes on one database", () => {
  it("keeps parallelism exact when two nodes claim from the same store", async () => {
    const env = { FERRY_POLL_INTERVAL_MS: "20" };
    const a = await startTestServer({ env });
    const b = await startTestServer({ env, dataDir: a.dataDir });
    // Count what each node claims (a pass-through wrapper: behaviour is unchanged), to be sure both took part.
    const claimed = new Map<TestServer, number>();
    for (const node of [a, b]) {
      const store = node.ferry.services.store;
      const leaseDue = store.messageLeaseDue.bind(store);
      store.messageLeaseDue = async (p) => {
        const got = await leaseDue(p);
        claimed.set(node, (claimed.get(node) ?? 0) + got.length);
        return got;
      };
    }
    try {
      const receiver = await newReceiver();
      receiver.setDefault({ status: 200, delayMs: 25 });
      const headers = flowHeaders("shared", "parallelism=3");
      await Promise.all([
        publishMany(a, 40, receiver.url("/n"), headers),
        publishMany(b, 40, receiver.url("/n"), headers),
      ]);
      // The node that finishes an attempt claims the next at once, so one node can win every race under load. Once
      // either has claimed, that node stops claiming (its attempts in flight finish): the other must claim the rest.
      await vi.waitFor(() => expect((claimed.get(a) ?? 0) + (claimed.get(b) ?? 0)).toBeGreaterThan(0), {
        timeout: 10_000,
        interval: 5,
      });
      const first = (claimed.get(a) ?? 0) > 0 ? a : b;
      await first.ferry.dispatcher.stop(10_000);
      await receiver.waitForCount(80, 30_000);
      expect(receiver.maxConcurrent).toBe(3);
      expect(new Set(receiver.requests.map((r) => r.headers["svc-message-id"])).size).toBe(80);
      expect(claimed.get(a)).toBeGreaterThan(0);
      expect(claimed.get(b)).toBeGreaterThan(0);
    } finally {
      await b.stop({ keepData: true });
      await a.stop();
    }
  }, 40_000);
});
