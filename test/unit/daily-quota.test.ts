import { describe, expect, it } from "vitest";
import { DAY_MS, dailyQuota, utcDayStart } from "../../src/domain/daily-quota.js";
import { plans, UNLIMITED } from "../../src/domain/plans.js";

/** The daily quota's rule (src/domain/daily-quota.ts, docs/messaging.md "Limits and rate limiting"). */
describe("daily quota", () => {
  it("counts per UTC day", () => {
    const noon = Date.UTC(2026, 10, 26, 12, 30);
    expect(utcDayStart(noon)).toBe(Date.UTC(2026, 10, 26));
    expect(utcDayStart(Date.UTC(2026, 10, 27) - 1)).toBe(Date.UTC(2026, 10, 26));
    expect(utcDayStart(Date.UTC(2026, 10, 27))).toBe(Date.UTC(2026, 10, 26) + DAY_MS);
  });

  it("takes the lower of max_requests_per_day and max_requests_per_day_hard", () => {
    const free = plans.free;
    expect(dailyQuota({ ...free, max_requests_per_day: 500, max_requests_per_day_hard: 800 })).toEqual({
      limit: 500,
      unlimited: false,
    });
    expect(dailyQuota({ ...free, max_requests_per_day: 500, max_requests_per_day_hard: 200 })).toEqual({
      limit: 200,
      unlimited: false,
    });
  });

  it("is unlimited only when both are", () => {
    const free = plans.free;
    expect(dailyQuota({ ...free, max_requests_per_day: UNLIMITED, max_requests_per_day_hard: UNLIMITED }).unlimited).toBe(true);
    expect(dailyQuota({ ...free, max_requests_per_day: UNLIMITED, max_requests_per_day_hard: 1000 })).toEqual({
      limit: 1000,
      unlimited: false,
    });
  });
});
