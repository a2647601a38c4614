import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { freePort } from "../helpers/postgres.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * The console's health routes and a schedule's run now (docs/console.md "Health", docs/schedules.md "Run now"), on
 * the store FERRY_TEST_STORE names: real deliveries to a real receiver, a destination that answers 500, and one that
 * refuses the connection.
 */
let server: TestServer;
let receiver: Receiver;
const json = { "Content-Type": "application/json" };

beforeAll(async () => {
  [server, receiver] = await Promise.all([startTestServer(), Receiver.start()]);
  receiver.setDefault((url) => (url.includes("fail") ? { status: 500, body: '{"error":"database down"}' } : { status: 200 }));
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

const health = async (query = "?period=1h", token?: string) =>
  server.call("GET", `/v2/account/health${query}`, token === undefined ? {} : { token });

describe("GET /v2/account/health", () => {
  it("answers an account with no traffic with no rate, no latency and no failing destination", async () => {
    const res = await health("");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      period: "1h",
      delivered: 0,
      failed: 0,
      successRate: null,
      latency: { p50: null, p99: null, sample: 0, sampleCapped: false },
      destinations: [],
      destinationsCapped: false,
    });
    expect(res.json.to - res.json.from).toBe(3_600_000);
  });

  it("gives the success rate, publish→delivery latency and the destinations ranked by failures with their cause", async () => {
    const refused = `http://127.0.0.1:${await freePort()}/refused`;
    for (let i = 0; i < 3; i++) await server.call("POST", `/v2/publish/${receiver.url(`/ok/${i}`)}`, { body: `${i}` });
    for (let i = 0; i < 2; i++) {
      await server.call("POST", `/v2/publish/${receiver.url("/fail")}`, { body: "x", headers: { "Svc-Retries": "0" } });
    }
    await server.call("POST", `/v2/publish/${refused}`, { body: "y", headers: { "Svc-Retries": "0" } });
    await receiver.waitForCount(5);

    const res = await eventually(async () => {
      const r = await health("?period=3h");
      expect(r.json).toMatchObject({ delivered: 3, failed: 3 });
      return r;
    }, 15_000);
    expect(res.json.period).toBe("3h");
    expect(res.json.successRate).toBe(0.5);
    const { latency } = res.json;
    expect(latency.sample).toBe(3);
    expect(latency.p50).toBeGreaterThanOrEqual(0);
    expect(latency.p99).toBeGreaterThanOrEqual(latency.p50);

    const [first, second] = res.json.destinations;
    expect(res.json.destinations).toHaveLength(2);
    expect(first).toMatchObject({ url: receiver.url("/fail"), failedAttempts: 2, failedMessages: 2 });
    expect(first.lastError).toMatchObject({ status: 500, error: "destination answered 500", bodyStart: '{"error":"database down"}' });
    expect(first.lastError.messageId).toMatch(/^msg_/);
    expect(second).toMatchObject({ url: refused, failedAttempts: 1, failedMessages: 1 });
    expect(second.lastError.status).toBeUndefined();
    expect(second.lastError.error).toMatch(/refused|ECONNREFUSED/i);
  });

  it("is open to the read-only token; a bad period or an unknown key is a 400 naming it", async () => {
    const readOnly = await health("?period=1d", server.ferry.bootstrap.account.readOnlyToken!);
    expect(readOnly.status).toBe(200);
    expect(readOnly.json.delivered).toBe(3);
    const bad = await health("?period=2h");
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/^invalid period: "2h" must be one of/);
    const unknown = await health("?periods=1h");
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toContain("periods");
    expect((await health("", "nope")).status).toBe(401);
  });
});

describe("GET /v2/account/queue-throughput", () => {
  it("counts each queue's deliveries of the window, and per minute", async () => {
    await server.call("POST", "/v2/queues", { body: JSON.stringify({ queueName: "mails", parallelism: 2 }), headers: json });
    const before = receiver.requests.length;
    for (let i = 0; i < 4; i++) await server.call("POST", `/v2/enqueue/mails/${receiver.url(`/mail/${i}`)}`, { body: `${i}` });
    await receiver.waitForCount(before + 4);
    const res = await eventually(async () => {
      const r = await server.call("GET", "/v2/account/queue-throughput?minutes=2");
      expect(r.json.queues).toEqual([{ queueName: "mails", delivered: 4, perMinute: 2 }]);
      return r;
    });
    expect(res.json).toMatchObject({ minutes: 2, capped: false });
    expect(res.json.to - res.json.from).toBe(120_000);
    const byDefault = await server.call("GET", "/v2/account/queue-throughput", { token: server.ferry.bootstrap.account.readOnlyToken! });
    expect(byDefault.json).toMatchObject({ minutes: 5, queues: [{ queueName: "mails", delivered: 4, perMinute: 0.8 }] });
    for (const bad of ["0", "61", "x"]) {
      const r = await server.call("GET", `/v2/account/queue-throughput?minutes=${bad}`);
      expect(r.status).toBe(400);
      expect(r.json.error).toMatch(/^invalid minutes: /);
    }
  });
});

describe("POST /v2/schedules/:id/trigger", () => {
  it("publishes the schedule's message once now, leaves its ticks alone, and is refused to the read-only token", async () => {
    const created = await server.call("POST", `/v2/schedules/${receiver.url("/nightly")}`, {
      body: '{"job":"report"}',
      headers: { ...json, "Svc-Cron": "0 3 1 1 *", "Svc-Schedule-Id": "nightly", "Svc-Forward-X-Job": "report" },
    });
    expect(created.status).toBe(200);
    const before = (await server.call("GET", "/v2/schedules/nightly")).json;

    const res = await server.call("POST", "/v2/schedules/nightly/trigger");
    expect(res.status).toBe(200);
    expect(res.json.messages).toEqual([{ messageId: expect.stringMatching(/^msg_/), url: receiver.url("/nightly") }]);
    const got = await receiver.waitForPath("/nightly");
    expect(got.text).toBe('{"job":"report"}');
    expect(got.headers["x-job"]).toBe("report");
    const logs = await eventually(async () => {
      const r = await server.call("GET", `/v2/logs?scheduleId=nightly&state=DELIVERED`);
      expect(r.json.logs).toHaveLength(1);
      return r.json.logs;
    });
    expect(logs[0].messageId).toBe(res.json.messages[0].messageId);

    const after = (await server.call("GET", "/v2/schedules/nightly")).json;
    expect(after.nextScheduleTime).toBe(before.nextScheduleTime);
    expect(after.lastScheduleTime).toBeUndefined();

    const readOnly = await server.call("POST", "/v2/schedules/nightly/trigger", { token: server.ferry.bootstrap.account.readOnlyToken! });
    expect(readOnly.status).toBe(403);
    const missing = await server.call("POST", "/v2/schedules/nope/trigger");
    expect(missing.status).toBe(404);
    expect(missing.json.error).toContain("nope");
  });

  it("publishes one message per endpoint of a URL group, and counts against the daily quota", async () => {
    await server.call("POST", "/v2/topics/team/endpoints", {
      body: JSON.stringify({ endpoints: [{ url: receiver.url("/team/a") }, { url: receiver.url("/team/b") }] }),
      headers: json,
    });
    await server.call("POST", "/v2/schedules/team", { headers: { "Svc-Cron": "0 0 1 1 *", "Svc-Schedule-Id": "team" } });
    const used = (await server.call("GET", "/v2/account")).json.quota.used;
    const res = await server.call("POST", "/v2/schedules/team/trigger");
    expect(res.status).toBe(200);
    expect(res.json.messages.map((m: { url: string }) => m.url).sort()).toEqual([receiver.url("/team/a"), receiver.url("/team/b")]);
    await receiver.waitForPath("/team/a");
    await receiver.waitForPath("/team/b");
    expect((await server.call("GET", "/v2/account")).json.quota.used).toBe(used + 2);

    // The group is looked up at the run, as at a tick: once it is gone, run now is a 404 naming it.
    expect((await server.call("DELETE", "/v2/topics/team")).status).toBe(200);
    const gone = await server.call("POST", "/v2/schedules/team/trigger");
    expect(gone.status).toBe(404);
    expect(gone.json.error).toContain("team");
  });
});
