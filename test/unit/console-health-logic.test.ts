import { describe, expect, it } from "vitest";
import { cronWords } from "../../console/src/lib/cron-words.js";
import { buildPublishRequest } from "../../console/src/lib/publish-request.js";
import { scheduleEditLosses, scheduleToForm } from "../../console/src/lib/schedule-form.js";
import type { Schedule } from "../../console/src/lib/types.js";
import { durationText, percentText, tableTime } from "../../console/src/lib/when.js";
import { BODY_START_BYTES, failureCause, percentile, successRate } from "../../src/domain/health.js";

/** A schedule's cron in plain words (console/src/lib/cron-words.ts). */
describe("cron in words", () => {
  it.each([
    ["* * * * *", "every minute"],
    ["*/5 * * * *", "every 5 minutes"],
    ["*/1 * * * *", "every minute"],
    ["0 * * * *", "every hour"],
    ["15 * * * *", "every hour at :15"],
    ["0,30 * * * *", "every hour at :00 and :30"],
    ["0 */2 * * *", "every 2 hours"],
    ["5 */6 * * *", "every 6 hours at :05"],
    ["0 9 * * 1", "at 09:00 on Monday (UTC)"],
    ["0 9 * * MON", "at 09:00 on Monday (UTC)"],
    ["30 8 * * 1-5", "at 08:30 on Monday to Friday (UTC)"],
    ["0 9,17 * * *", "at 09:00 and 17:00 every day (UTC)"],
    ["0 3 * * *", "at 03:00 every day (UTC)"],
    ["0 0 1 * *", "at 00:00 on day 1 of the month (UTC)"],
    ["0 0 1,15 * *", "at 00:00 on days 1 and 15 of the month (UTC)"],
    ["0 0 1 1 *", "at 00:00 on 1 January (UTC)"],
    ["0 12 * 6-8 *", "at 12:00 every day in June to August (UTC)"],
    ["0 0 1 * 1", "at 00:00 on day 1 of the month or on Monday (UTC)"],
    ["*/10 9 * * *", "every 10 minutes from 09:00 to 09:59 every day (UTC)"],
    ["*/15 * * * 1-5", "every 15 minutes on Monday to Friday (UTC)"],
    ["0 9-17 * * 1-5", "every hour at :00 from 09:00 to 17:00 on Monday to Friday (UTC)"],
    ["0 0 * * 0,6", "at 00:00 on Sunday and Saturday (UTC)"],
    ["CRON_TZ=Europe/Berlin 0 9 * * 1-5", "at 09:00 on Monday to Friday (Europe/Berlin)"],
    ["TZ=America/New_York 0 0 * * *", "at 00:00 every day (America/New_York)"],
    ["@daily", "at 00:00 every day (UTC)"],
    ["@hourly", "every hour"],
    ["@weekly", "at 00:00 on Sunday (UTC)"],
    ["  */5   * * * *  ", "every 5 minutes"],
  ])("%s is %s", (cron, words) => {
    expect(cronWords(cron)).toBe(words);
  });

  it("gives up on what it cannot say, so the expression is shown alone", () => {
    for (const cron of ["0 0 L * *", "0 0 * * 1#2", "1-30/5 * * * *", "* * *", "", "0 0 * 13 *", "x * * * *", "5-1 * * * *"]) {
      expect(cronWords(cron), cron).toBeUndefined();
    }
  });
});

/** The arithmetic of GET /v2/account/health (src/domain/health.ts). */
describe("health arithmetic", () => {
  it("takes nearest-rank percentiles without sorting the caller's array", () => {
    const values = [50, 10, 40, 30, 20];
    expect(percentile(values, 50)).toBe(30);
    expect(percentile(values, 99)).toBe(50);
    expect(percentile(values, 0)).toBe(10);
    expect(values).toEqual([50, 10, 40, 30, 20]);
    expect(percentile([], 50)).toBeNull();
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(hundred, 50), percentile(hundred, 99)]).toEqual([50, 99]);
  });

  it("rates success over the messages that ended delivered or failed", () => {
    expect(successRate(3, 1)).toBe(0.75);
    expect(successRate(0, 2)).toBe(0);
    expect(successRate(0, 0)).toBeNull();
  });

  it("reads a failed attempt's cause: error, status and the start of the body", () => {
    const body = Buffer.from("x".repeat(BODY_START_BYTES + 50)).toString("base64");
    const cause = failureCause(JSON.stringify({ error: "destination answered 502", responseStatus: 502, responseBody: body }));
    expect(cause).toEqual({ error: "destination answered 502", status: 502, bodyStart: "x".repeat(BODY_START_BYTES) });
    expect(failureCause(JSON.stringify({ error: "connect ECONNREFUSED 127.0.0.1:9" }))).toEqual({
      error: "connect ECONNREFUSED 127.0.0.1:9",
    });
    expect(failureCause("not json")).toEqual({ error: "delivery failed" });
  });
});

/** Edit: a schedule's record back into the form that sends the same request (console/src/lib/schedule-form.ts). */
describe("a schedule as its form", () => {
  const record: Schedule = {
    scheduleId: "nightly",
    cron: "CRON_TZ=Europe/Berlin 0 3 * * *",
    createdAt: 1,
    destination: "https://example.com/hook?x=1",
    method: "PUT",
    isPaused: true,
    retries: 2,
    header: { "Content-Type": ["application/json"], "X-Job": ["report"] },
    body: '{"job":"report"}',
    delay: 30,
    timeout: 20,
    callback: "https://example.com/cb",
    failureCallback: "https://example.com/fail",
    labels: ["a", "b"],
    queueName: "reports",
    flowControlKey: "tenant",
    parallelism: 2,
    rate: 10,
    period: 60,
    retryDelayExpression: "1000 * retried",
  };

  it("fills every field the form has, and sends the same configuration again", () => {
    const form = scheduleToForm(record);
    expect(form).toMatchObject({
      cron: record.cron,
      destination: record.destination,
      method: "PUT",
      contentType: "application/json",
      headers: [{ name: "X-Job", value: "report" }],
      body: '{"job":"report"}',
      retries: "2",
      delay: "30s",
      timeout: "20s",
      retryDelay: "1000 * retried",
      callback: "https://example.com/cb",
      failureCallback: "https://example.com/fail",
      labels: "a, b",
      queue: "reports",
      flowControlKey: "tenant",
      flowParallelism: "2",
      flowRate: "10",
      flowPeriod: "60s",
    });
    const request = buildPublishRequest(form, "Svc-");
    expect(request.path).toBe("/v2/schedules/https://example.com/hook?x=1");
    expect(request.headers).toMatchObject({
      "Svc-Cron": record.cron,
      "Svc-Method": "PUT",
      "Svc-Forward-X-Job": "report",
      "Svc-Delay": "30s",
      "Svc-Queue-Name": "reports",
      "Svc-Label": "a,b",
      "Svc-Flow-Control-Value": "parallelism=2, rate=10, period=60s",
    });
    expect(scheduleEditLosses(record)).toEqual([]);
  });

  it("names what the form cannot keep", () => {
    expect(scheduleEditLosses({ ...record, body: undefined, bodyBase64: "AAE=", callbackHeader: { A: ["1"] } })).toEqual([
      "its binary body",
      "its callback headers",
    ]);
  });
});

describe("times and amounts as read", () => {
  it("shows every time of a table with its date, the year only when it is not this one", () => {
    const now = Date.UTC(2026, 10, 26, 12);
    const thisYear = tableTime(Date.UTC(2026, 10, 26, 9, 5), now);
    const lastYear = tableTime(Date.UTC(2025, 0, 2, 9, 5), now);
    expect(thisYear).not.toMatch(/2026/);
    expect(thisYear).toMatch(/26/);
    expect(lastYear).toMatch(/2025/);
  });

  it("says latencies and rates plainly", () => {
    expect([durationText(850), durationText(1234), durationText(42_000), durationText(185_000), durationText(7_800_000)]).toEqual([
      "850 ms",
      "1.2 s",
      "42 s",
      "3 min 5 s",
      "2 h 10 min",
    ]);
    expect([percentText(1), percentText(0.9996), percentText(0.5), percentText(2 / 3)]).toEqual(["100 %", "99.9 %", "50 %", "66.6 %"]);
  });
});
