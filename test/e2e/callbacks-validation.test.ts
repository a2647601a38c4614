import { describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { eventually } from "../helpers/eventually.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { json, logStates, publish, receiver, server, skip } from "./callbacks-fixture.js";

describe("validation at insertion (seed 3.3 rule 8)", () => {
  it("rejects a delayed callback or failure callback with 400 naming the header", async () => {
    const dest = await receiver();
    const cb = await receiver();
    const cases: [Record<string, string>, string][] = [
      [{ "svc-callback": cb.url("/cb"), "svc-callback-delay": "10s" }, "Svc-Callback-Delay"],
      [{ "svc-failure-callback": cb.url("/f"), "svc-failure-callback-delay": "1m" }, "Svc-Failure-Callback-Delay"],
      [{ "svc-callback": cb.url("/cb"), "svc-callback-delay": "soon" }, "Svc-Callback-Delay"],
    ];
    for (const [headers, field] of cases) {
      const res = await publish(server, dest.url("/x"), headers);
      expect(res.status).toBe(400);
      expect(res.json.error).toContain(field);
    }
    const viaQuery = await server.call("POST", `/v2/publish/${dest.url("/x")}?svc-callback-delay=5s`, {
      headers: { "svc-callback": cb.url("/cb") },
      body: "x",
    });
    expect(viaQuery.status).toBe(400);
    expect(viaQuery.json.error).toContain("Svc-Callback-Delay");

    const zero = await publish(server, dest.url("/x"), { "svc-callback": cb.url("/cb"), "svc-callback-delay": "0s" });
    expect(zero.status).toBe(200);
    await cb.next();
    expect(dest.requests).toHaveLength(1);
  });

  it("rejects a callback URL that is not a valid http(s) URL with 400 naming the header", async () => {
    const dest = await receiver();
    const cases: [Record<string, string>, string][] = [
      [{ "svc-callback": "not a url" }, "Svc-Callback"],
      [{ "svc-callback": "ftp://example.com/cb" }, "Svc-Callback"],
      [{ "svc-failure-callback": "nope" }, "Svc-Failure-Callback"],
    ];
    for (const [headers, field] of cases) {
      const res = await publish(server, dest.url("/x"), headers);
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(new RegExp(`^invalid ${field}:`));
    }
    await dest.expectQuiet(200);
  });
});

describe("records show callback settings (reference §3.1, §3.2)", () => {
  it("message and log records carry callback, failureCallback and their header maps", async () => {
    const dest = await receiver();
    const res = await publish(server, dest.url("/later"), {
      "svc-delay": "1h",
      "svc-callback": "http://127.0.0.1:9/cb",
      "svc-callback-forward-x-cb": "1",
      "svc-failure-callback": "http://127.0.0.1:9/fail",
      "svc-failure-callback-forward-x-fcb": "2",
    });
    const id = res.json.messageId;
    const record = await server.call("GET", `/v2/messages/${id}`);
    expect(record.json).toMatchObject({
      callback: "http://127.0.0.1:9/cb",
      callbackHeader: { "X-Cb": ["1"] },
      failureCallback: "http://127.0.0.1:9/fail",
      failureCallbackHeader: { "X-Fcb": ["2"] },
    });
    const logs = await server.call("GET", `/v2/events?messageId=${id}`);
    expect(logs.json.events[0]).toMatchObject({
      state: "CREATED",
      callback: "http://127.0.0.1:9/cb",
      callbackHeaders: { "X-Cb": ["1"] },
      failureCallback: "http://127.0.0.1:9/fail",
      failureCallbackHeaders: { "X-Fcb": ["2"] },
    });
    expect((await server.call("DELETE", `/v2/messages/${id}`)).status).toBe(200);
  });
});

describe("truncated response body (seed 3.3 rule 7)", () => {
  it("a response larger than max_message_size reaches the callback truncated to it", async () => {
    const free = await startTestServer({ env: { FERRY_DEFAULT_PLAN: "free" } });
    try {
      const dest = await receiver();
      const cb = await receiver();
      const big = Buffer.alloc(1024 * 1024 + 300 * 1024);
      for (let i = 0; i < big.length; i++) big[i] = i % 251;
      dest.setDefault({ status: 200, body: big });
      await publish(free, dest.url("/big"), { "svc-callback": cb.url("/cb") });
      const body = Buffer.from(json(await cb.next({ timeoutMs: 20_000 })).body, "base64");
      expect(body.length).toBe(1024 * 1024); // the free plan's max_message_size
      expect(body.equals(big.subarray(0, 1024 * 1024))).toBe(true);
    } finally {
      await free.stop();
    }
  });
});

describe("durability", () => {
  it("a pending callback survives a restart between the delivery and the callback delivery", async () => {
    const restartClock = new OffsetClock();
    const first = await startTestServer({ clock: restartClock });
    let second: TestServer | undefined;
    try {
      const dest = await receiver();
      const cb = await receiver();
      cb.respondWith({ status: 503 });
      const res = await publish(first, dest.url("/ok"), { "svc-retries": "2", "svc-callback": cb.url("/cb") });
      const refused = await cb.next();
      const callbackId = String(refused.headers["svc-message-id"]);
      await eventually(async () => expect(await logStates(first, callbackId)).toContain("RETRY"));
      await first.stop({ keepData: true });

      second = await startTestServer({ clock: restartClock, dataDir: first.dataDir });
      const pending = await second.call("GET", `/v2/messages/${callbackId}`);
      expect(pending.status).toBe(200);
      expect(pending.json).toMatchObject({ messageId: callbackId, url: cb.url("/cb"), maxRetries: 2 });

      skip(second, restartClock, 13_000);
      const delivered = await cb.next();
      expect(delivered.headers["svc-message-id"]).toBe(callbackId);
      expect(delivered.headers["svc-retried"]).toBe("1");
      expect(delivered.text).toBe(refused.text);
      expect(json(delivered)).toMatchObject({ status: 200, sourceMessageId: res.json.messageId });
      expect(dest.requests).toHaveLength(1);
    } finally {
      if (second) await second.stop();
      else await first.stop();
    }
  });
});
