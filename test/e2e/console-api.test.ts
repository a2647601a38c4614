import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** The routes the console reads (docs/console.md): the token's account, its statistics, the dialect's names. */
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  [server, receiver] = await Promise.all([
    startTestServer({ env: { FERRY_PLAN_PAID_MAX_REQUESTS_PER_DAY: "1000" } }),
    Receiver.start(),
  ]);
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

describe("GET /v2/account", () => {
  it("answers the token's account, limits, today's quota use, messages in flight and DLQ size", async () => {
    const empty = await server.call("GET", "/v2/account");
    expect(empty.status).toBe(200);
    expect(empty.json).toMatchObject({
      accountId: server.ferry.bootstrap.account.id,
      plan: "paid",
      readOnly: false,
      quota: { used: 0, limit: 1000 },
      inFlight: 0,
      dlqSize: 0,
    });
    expect(empty.json.limits.max_requests_per_day).toBe(1000);
    // Every plan limit, as the management account record has them (docs/management.md).
    expect(Object.keys(empty.json.limits)).toHaveLength(22);
    const day = Date.now() - (Date.now() % 86_400_000);
    expect(empty.json.quota.resetsAt).toBe(day + 86_400_000);

    receiver.setDefault({ status: 500 });
    await server.call("POST", `/v2/publish/${receiver.url("/later")}`, { headers: { "Svc-Delay": "1h" }, body: "x" });
    await server.call("POST", `/v2/publish/${receiver.url("/fail")}`, { headers: { "Svc-Retries": "0" }, body: "y" });
    await receiver.waitForCount(1);
    const deadline = Date.now() + 10_000;
    let account = (await server.call("GET", "/v2/account")).json;
    while (account.dlqSize === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      account = (await server.call("GET", "/v2/account")).json;
    }
    expect(account).toMatchObject({ inFlight: 1, dlqSize: 1, quota: { used: 2, limit: 1000 } });
  });

  it("reports readOnly for the read-only token, and refuses unknown query keys", async () => {
    const readOnly = await server.call("GET", "/v2/account", { token: server.ferry.bootstrap.account.readOnlyToken! });
    expect(readOnly.status).toBe(200);
    expect(readOnly.json.readOnly).toBe(true);
    const unknown = await server.call("GET", "/v2/account?x=1");
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toContain("x");
    expect((await server.call("GET", "/v2/account", { token: "nope" })).status).toBe(401);
  });
});

describe("GET /v2/account/stats", () => {
  it("answers the management API's usage statistics for the token's own account", async () => {
    const stats = await server.call("GET", "/v2/account/stats?period=1d");
    expect(stats.status).toBe(200);
    expect(stats.json.daily_used).toHaveLength(60);
    const published = stats.json.daily_used.reduce((sum: number, p: { y: number }) => sum + p.y, 0);
    expect(published).toBeGreaterThanOrEqual(2);
    expect(stats.json.daily_msgsvc_messages.map((s: { id: string }) => s.id)).toEqual([
      "delivered",
      "failed",
      "retried",
      "canceled",
    ]);
    // Every key of the shape, and money as it is: a fraction of a dollar must not be truncated by the serializer.
    expect(Object.keys(stats.json).sort()).toEqual(
      [
        "days",
        "daily_requests",
        "daily_billings",
        "daily_bandwidths",
        "daily_used",
        "daily_used_workflow",
        "daily_msgsvc_messages",
        "daily_workflow_messages",
        "dlq_message_count",
        "daily_bandwidth_used",
        "total_monthly_billing",
      ].sort(),
    );
    const month = stats.json.daily_requests.reduce((sum: number, p: { y: number }) => sum + p.y, 0);
    expect(month).toBeGreaterThanOrEqual(2);
    // FERRY_PRICE_PER_100K defaults to 1 dollar: each message is a hundred-thousandth of one.
    expect(stats.json.total_monthly_billing).toBeCloseTo(month / 100_000, 9);
    expect(stats.json.total_monthly_billing).toBeGreaterThan(0);
    const bad = await server.call("GET", "/v2/account/stats?period=2h");
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("period");
  });
});

describe("the console's own routes", () => {
  it("/console/config.json names the dialect's header prefix and management segment, without a token", async () => {
    const neutral = await server.call("GET", "/console/config.json", { token: null });
    expect(neutral.status).toBe(200);
    expect(neutral.json).toEqual({
      dialect: "neutral",
      headerPrefix: "Svc-",
      tokenQuery: "svc_token",
      managementSegment: "msgsvc",
      fixedPlanPrefix: "msgsvc_fixed",
      version: server.ferry.services.version,
    });
    expect(neutral.headers["content-security-policy"]).toContain("default-src 'self'");

    const upstash = await startTestServer({ env: { FERRY_DIALECT: "upstash" } });
    try {
      const config = await upstash.call("GET", "/console/config.json", { token: null });
      expect(config.json).toMatchObject({
        dialect: "upstash",
        headerPrefix: "Upstash-",
        tokenQuery: "qstash_token",
        managementSegment: "qstash",
      });
    } finally {
      await upstash.stop();
    }
  });

  it("redirects a browser from / to /console/ and serves the page with its security headers", async () => {
    const redirect = await server.call("GET", "/", { token: null, headers: { accept: "text/html,*/*" } });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.location).toBe("/console/");
    const page = await server.call("GET", "/console/", { token: null });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
    expect(page.headers["content-security-policy"]).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; font-src 'self'; " +
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(page.text)![1]!;
    const js = await server.call("GET", asset, { token: null });
    expect(js.status).toBe(200);
    expect(js.headers["cache-control"]).toContain("immutable");
  });
});
