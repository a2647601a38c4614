import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { addCustomer, adminEnv, type Credentials, eventually, manage } from "../helpers/management.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Usage statistics from the real per-minute counters. The clock is pinned (ManualClock) so every publish and
 * outcome lands in a known minute; messages go to a real receiver and through the real delivery engine.
 *
 * Timeline (UTC), every body "hello" (5 bytes):
 *   2025-09-30 22:00:00  1 delivered                       (previous month)
 *   2025-10-14 09:00:00  4 delivered
 *   2025-10-15 11:20:30  3 delivered
 *   2025-10-15 11:33:10  2 failed (retries 0, to the DLQ), 1 delayed then canceled
 *   stats asked at 2025-10-15 11:40:45
 */
const at = (iso: string) => Date.parse(iso);
const clock = new ManualClock(at("2025-09-30T22:00:00Z"));
let server: TestServer;
let receiver: Receiver;
let accountId: string;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the stats record is asserted field by field below
let stats: Record<string, any>;

async function publishAndSettle(n: number, headers: Record<string, string> = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await server.call("POST", `/v2/publish/${receiver.url("/stats")}`, { headers, body: "hello" });
    expect(res.status).toBe(200);
    ids.push(res.json.messageId);
  }
  // A delivered or failed message leaves the hot table in the same transaction that counts its outcome.
  for (const id of ids) {
    await eventually(async () => (await server.call("GET", `/v2/messages/${id}`)).status === 404, `${id} to settle`);
  }
  return ids;
}

async function getStats(query = "", auth?: Credentials, id = accountId) {
  const res = await manage(server, "GET", `/v2/msgsvc/stats/${id}${query}`, auth === undefined ? {} : { auth });
  expect(res.status).toBe(200);
  return res.json;
}

const ys = (points: { y: number }[]) => points.map((p) => p.y);
/** A series of `length` zeros with the given values at the given indexes. */
function expected(length: number, values: Record<number, number>): number[] {
  const out = new Array<number>(length).fill(0);
  for (const [i, v] of Object.entries(values)) out[Number(i)] = v;
  return out;
}

beforeAll(async () => {
  // 25,000 dollars per 100k messages: a quarter dollar per message keeps the billing sums exact in binary, and
  // fractional, so an answer that cut them to integers (the wire shape's `Number`, src/http/schemas/management.ts) fails.
  server = await startTestServer({ env: { ...adminEnv, FERRY_PRICE_PER_100K: "25000" }, clock });
  receiver = await Receiver.start();
  accountId = server.ferry.bootstrap.account.id;

  await publishAndSettle(1);
  clock.set(at("2025-10-14T09:00:00Z"));
  await publishAndSettle(4);
  clock.set(at("2025-10-15T11:20:30Z"));
  await publishAndSettle(3);
  clock.set(at("2025-10-15T11:33:10Z"));
  receiver.respondWith({ status: 500 }, { status: 500 });
  await publishAndSettle(2, { "svc-retries": "0" });
  const delayed = await server.call("POST", `/v2/publish/${receiver.url("/stats")}`, {
    headers: { "svc-delay": "1h" },
    body: "hello",
  });
  expect((await server.call("DELETE", `/v2/messages/${delayed.json.messageId}`)).json).toEqual({ cancelled: 1 });
  clock.set(at("2025-10-15T11:40:45Z"));
  stats = await getStats("?period=1h");
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

describe("usage statistics, 1h", () => {
  it("has every seed 2.3 field", () => {
    expect(Object.keys(stats).sort()).toEqual(
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
  });

  it("has 60 points, one per minute of the last hour, the last one the current minute", () => {
    for (const series of [stats.daily_used, stats.daily_used_workflow, stats.daily_bandwidth_used]) {
      expect(series).toHaveLength(60);
    }
    expect(stats.daily_used[0].x).toBe("2025-10-15 10:41:00 +0000 UTC");
    expect(stats.daily_used[1].x).toBe("2025-10-15 10:42:00 +0000 UTC");
    expect(stats.daily_used[59].x).toBe("2025-10-15 11:40:00 +0000 UTC");
    // 11:20 is point 39, 11:33 point 52.
    expect(ys(stats.daily_used)).toEqual(expected(60, { 39: 3, 52: 3 }));
    expect(ys(stats.daily_used_workflow)).toEqual(expected(60, {}));
    // Bytes received plus bytes delivered: 3 × (5 + 5) at 11:20; 2 failed + 1 canceled bodies received at 11:33.
    expect(ys(stats.daily_bandwidth_used)).toEqual(expected(60, { 39: 30, 52: 15 }));
  });

  it("counts delivered, failed, retried and canceled messages by metric id", () => {
    const series = Object.fromEntries(
      stats.daily_msgsvc_messages.map((s: { id: string; data_points: { x: string; y: number }[] }) => [
        s.id,
        s.data_points,
      ]),
    );
    expect(Object.keys(series)).toEqual(["delivered", "failed", "retried", "canceled"]);
    expect(ys(series.delivered)).toEqual(expected(60, { 39: 3 }));
    expect(ys(series.failed)).toEqual(expected(60, { 52: 2 }));
    expect(ys(series.retried)).toEqual(expected(60, {}));
    expect(ys(series.canceled)).toEqual(expected(60, { 52: 1 }));
    expect(series.delivered.map((p: { x: string }) => p.x)).toEqual(stats.daily_used.map((p: { x: string }) => p.x));
    // No workflow ran here: both workflow series are zeros (docs/workflows.md "Statistics").
    expect(stats.daily_workflow_messages.map((s: { id: string }) => s.id)).toEqual(["workflow_run", "workflow_message"]);
    for (const s of stats.daily_workflow_messages) expect(ys(s.data_points)).toEqual(expected(60, {}));
  });

  it("has the weekday names and daily arrays of the whole current month, future days included", () => {
    expect(stats.days).toHaveLength(31);
    expect(stats.days.slice(0, 8)).toEqual([
      "Wednesday",
      "Thursday",
      "Friday",
      "Saturday",
      "Sunday",
      "Monday",
      "Tuesday",
      "Wednesday",
    ]);
    expect(stats.days[30]).toBe("Friday");
    for (const key of ["daily_requests", "daily_billings", "daily_bandwidths"]) expect(stats[key]).toHaveLength(31);
    expect(stats.daily_requests[0]).toEqual({
      x: "2025-10-01 00:00:00 +0000 UTC",
      y: 0,
      workflow_message: 0,
      workflow_run: 0,
    });
    expect(stats.daily_requests[30].x).toBe("2025-10-31 00:00:00 +0000 UTC");
    // September's message is not in October's arrays.
    expect(ys(stats.daily_requests)).toEqual(expected(31, { 13: 4, 14: 6 }));
    expect(ys(stats.daily_bandwidths)).toEqual(expected(31, { 13: 40, 14: 45 }));
  });

  it("bills the configured price per 100k messages and counts the dead letter queue", () => {
    expect(ys(stats.daily_billings)).toEqual(expected(31, { 13: 1, 14: 1.5 }));
    expect(stats.total_monthly_billing).toBe(2.5);
    expect(stats.dlq_message_count).toBe(2);
  });
});

describe("usage statistics, other periods", () => {
  it("defaults to 1h", async () => {
    expect(await getStats()).toEqual(stats);
  });

  /** [period, step in minutes, first x, last x, non-zero daily_used points] */
  const cases: [string, number, string, string, Record<number, number>][] = [
    ["3h", 3, "2025-10-15 08:42:00", "2025-10-15 11:39:00", { 52: 3, 57: 3 }],
    ["12h", 12, "2025-10-14 23:48:00", "2025-10-15 11:36:00", { 57: 3, 58: 3 }],
    ["1d", 24, "2025-10-14 12:00:00", "2025-10-15 11:36:00", { 58: 6 }],
    ["3d", 72, "2025-10-12 12:00:00", "2025-10-15 10:48:00", { 37: 4, 59: 6 }],
    ["7d", 168, "2025-10-08 12:48:00", "2025-10-15 10:00:00", { 50: 4, 59: 6 }],
  ];
  for (const [period, stepMin, first, last, values] of cases) {
    it(`${period}: 60 points every ${stepMin} minutes`, async () => {
      const s = await getStats(`?period=${period}`);
      for (const series of [s.daily_used, s.daily_used_workflow, s.daily_bandwidth_used]) {
        expect(series).toHaveLength(60);
      }
      for (const series of s.daily_msgsvc_messages) expect(series.data_points).toHaveLength(60);
      expect(s.daily_used[0].x).toBe(`${first} +0000 UTC`);
      expect(s.daily_used[59].x).toBe(`${last} +0000 UTC`);
      const xs = s.daily_used.map((p: { x: string }) => Date.parse(p.x.replace(" +0000 UTC", "Z").replace(" ", "T")));
      for (let i = 1; i < xs.length; i++) expect(xs[i] - xs[i - 1]).toBe(stepMin * 60_000);
      expect(ys(s.daily_used)).toEqual(expected(60, values));
      // The month arrays do not depend on the period.
      expect(s.days).toEqual(stats.days);
      expect(s.daily_requests).toEqual(stats.daily_requests);
    });
  }

  it("30d: 240 points at 3-hour steps", async () => {
    const s = await getStats("?period=30d");
    expect(s.daily_used).toHaveLength(240);
    expect(s.daily_bandwidth_used).toHaveLength(240);
    expect(s.daily_msgsvc_messages[0].data_points).toHaveLength(240);
    expect(s.daily_used[0].x).toBe("2025-09-15 12:00:00 +0000 UTC");
    expect(s.daily_used[1].x).toBe("2025-09-15 15:00:00 +0000 UTC");
    expect(s.daily_used[239].x).toBe("2025-10-15 09:00:00 +0000 UTC");
    // September 30 22:00 is point 123, October 14 09:00 point 231, October 15 11:20 and 11:33 point 239.
    expect(ys(s.daily_used)).toEqual(expected(240, { 123: 1, 231: 4, 239: 6 }));
  });

  it("refuses any other period with 400 naming period", async () => {
    for (const period of ["2h", "1H", "30", "", "1h,3h"]) {
      const res = await manage(server, "GET", `/v2/msgsvc/stats/${accountId}?period=${period}`);
      expect(res.status, period).toBe(400);
      expect(res.json.error).toMatch(/^invalid period: /);
    }
  });

  it("serves the legacy path without an id for the caller's first account", async () => {
    const res = await manage(server, "GET", "/v2/msgsvc/stats?period=1h");
    expect(res.json).toEqual(stats);
  });
});

describe("usage statistics per account and plan", () => {
  it("shows another account none of these numbers", async () => {
    const other = await addCustomer(server, "stats-other@test.local");
    const s = await getStats("", other.credentials, other.accountId);
    expect(ys(s.daily_used)).toEqual(expected(60, {}));
    expect(ys(s.daily_requests)).toEqual(expected(31, {}));
    expect(s.dlq_message_count).toBe(0);
    expect(s.total_monthly_billing).toBe(0);
    expect((await manage(server, "GET", `/v2/msgsvc/stats/${accountId}`, { auth: other.credentials })).status).toBe(
      404,
    );
  });

  it("bills nothing on the free plan", async () => {
    await manage(server, "POST", `/v2/msgsvc/set-plan/${accountId}`, { body: { plan_name: "free" } });
    const s = await getStats();
    expect(ys(s.daily_billings)).toEqual(expected(31, {}));
    expect(s.total_monthly_billing).toBe(0);
    expect(ys(s.daily_requests)).toEqual(ys(stats.daily_requests));
  });
});
