import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { addCustomer, adminEnv, manage } from "../helpers/management.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Plan limits on the messaging API, each crossed once. Every limit under test is lowered with a plan override
 * (FERRY_PLAN_<PLAN>_<FIELD>) on its own plan, and each rule gets its own account on that plan, so one server
 * covers them all without the rules interfering.
 */
const env = {
  ...adminEnv,
  FERRY_PLAN_MSGSVC_FIXED_10M_MAX_REQUESTS_PER_DAY: "3",
  FERRY_PLAN_MSGSVC_FIXED_1M_MAX_REQUESTS_PER_DAY_HARD: "2",
  FERRY_PLAN_MSGSVC_FIXED_100M_MAX_REQUESTS_PER_SECOND: "5",
  FERRY_PLAN_FREE_MAX_MESSAGE_SIZE: "1000",
};
const clock = new ManualClock(Date.parse("2025-10-15T23:59:00Z"));
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer({ env, clock });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

const publish = (token: string, headers: Record<string, string> = {}, body: string | Buffer = "x") =>
  server.call("POST", `/v2/publish/${receiver.url("/limits")}`, { token, headers, body });

describe("max_requests_per_day", () => {
  it("answers 429 with RateLimit-* once the day's quota is used, counted in the store, reset at UTC midnight", async () => {
    const daily = await addCustomer(server, "daily@test.local", "msgsvc_fixed_10m");
    const record = await manage(server, "GET", `/v2/msgsvc/user/${daily.accountId}`, { auth: daily.credentials });
    expect(record.json.max_requests_per_day).toBe(3);

    for (let i = 0; i < 3; i++) expect((await publish(daily.token)).status).toBe(200);
    const refused = await publish(daily.token);
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatch(/max_requests_per_day is 3/);
    expect(refused.headers["ratelimit-limit"]).toBe("3");
    expect(refused.headers["ratelimit-remaining"]).toBe("0");
    expect(refused.headers["ratelimit-reset"]).toBe(String(Date.parse("2025-10-16T00:00:00Z") / 1000));
    expect(refused.headers["burst-ratelimit-limit"]).toBeUndefined();
    // The refused publish wrote nothing.
    const logs = await server.call("GET", "/v2/logs?state=CREATED", { token: daily.token });
    expect(logs.json.logs).toHaveLength(3);
    // Other accounts are not affected.
    expect((await publish(server.token)).status).toBe(200);

    // The count lives in the store: a restarted node still refuses.
    await server.stop({ keepData: true });
    server = await startTestServer({ env, clock, dataDir: server.dataDir });
    expect((await publish(daily.token)).status).toBe(429);

    clock.set(Date.parse("2025-10-16T00:00:01Z"));
    expect((await publish(daily.token)).status).toBe(200);
  });

  it("applies the lower of max_requests_per_day and max_requests_per_day_hard", async () => {
    const hard = await addCustomer(server, "hard@test.local", "msgsvc_fixed_1m");
    for (let i = 0; i < 2; i++) expect((await publish(hard.token)).status).toBe(200);
    const refused = await publish(hard.token);
    expect(refused.status).toBe(429);
    expect(refused.headers["ratelimit-limit"]).toBe("2");
  });
});

describe("max_requests_per_second", () => {
  it("answers 429 with only the Burst-RateLimit-* headers within one second, and recovers the next", async () => {
    const burst = await addCustomer(server, "burst@test.local", "msgsvc_fixed_100m");
    clock.set(Date.parse("2025-10-16T08:00:00.100Z"));
    for (let i = 0; i < 4; i++) expect((await server.call("GET", "/v2/keys", { token: burst.token })).status).toBe(200);
    expect((await publish(burst.token)).status).toBe(200);

    for (const refused of [await server.call("GET", "/v2/keys", { token: burst.token }), await publish(burst.token)]) {
      expect(refused.status).toBe(429);
      expect(refused.json.error).toMatch(/max_requests_per_second is 5/);
      expect(refused.headers["burst-ratelimit-limit"]).toBe("5");
      expect(refused.headers["burst-ratelimit-remaining"]).toBe("0");
      expect(refused.headers["burst-ratelimit-reset"]).toBe(String(Date.parse("2025-10-16T08:00:01Z") / 1000));
      // The SDKs take any 429 with RateLimit-Limit for the daily quota.
      expect(refused.headers["ratelimit-limit"]).toBeUndefined();
    }
    // Another account in the same second is not affected.
    expect((await server.call("GET", "/v2/keys")).status).toBe(200);

    clock.set(Date.parse("2025-10-16T08:00:01.000Z"));
    expect((await server.call("GET", "/v2/keys", { token: burst.token })).status).toBe(200);
  });
});

describe("max_message_size, max_retries, max_delay", () => {
  let small: Awaited<ReturnType<typeof addCustomer>>;
  beforeAll(async () => {
    small = await addCustomer(server, "small@test.local", "free");
  });

  it("answers 413 above max_message_size", async () => {
    expect((await publish(small.token, {}, Buffer.alloc(1000, 97))).status).toBe(200);
    const res = await publish(small.token, {}, Buffer.alloc(1001, 97));
    expect(res.status).toBe(413);
    expect(res.json.error).toMatch(/max_message_size \(1000\)/);
  });

  it("answers 400 naming the header above max_retries", async () => {
    expect((await publish(small.token, { "svc-retries": "3" })).status).toBe(200);
    for (const [headers, field] of [
      [{ "svc-retries": "4" }, "Svc-Retries"],
      [{ "svc-callback": receiver.url("/cb"), "svc-callback-retries": "4" }, "Svc-Callback-Retries"],
      [
        { "svc-failure-callback": receiver.url("/f"), "svc-failure-callback-retries": "9" },
        "Svc-Failure-Callback-Retries",
      ],
    ] as const) {
      const res = await publish(small.token, headers);
      expect(res.status, field).toBe(400);
      expect(res.json.error).toMatch(new RegExp(`^invalid ${field}: .*max_retries \\(3\\)`));
    }
    const query = await server.call("POST", `/v2/publish/${receiver.url("/limits")}?svc-retries=4`, {
      token: small.token,
      body: "x",
    });
    expect(query.status).toBe(400);
    // The paid plan allows 20.
    expect((await publish(server.token, { "svc-retries": "20" })).status).toBe(200);
    expect((await publish(server.token, { "svc-retries": "21" })).status).toBe(400);
  });

  it("answers 400 naming the header above max_delay", async () => {
    expect((await publish(small.token, { "svc-delay": "7d" })).status).toBe(200);
    const delay = await publish(small.token, { "svc-delay": "604801s" });
    expect(delay.status).toBe(400);
    expect(delay.json.error).toMatch(/^invalid Svc-Delay: .*max_delay \(604800 s\)/);
    const notBefore = await publish(small.token, {
      "svc-not-before": String(Math.floor(clock.now() / 1000) + 604_801),
    });
    expect(notBefore.status).toBe(400);
    expect(notBefore.json.error).toMatch(/^invalid Svc-Not-Before: /);
  });
});
