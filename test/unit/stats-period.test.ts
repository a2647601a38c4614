import { describe, expect, it } from "vitest";
import { goTimeString, monthWindow, periodWindow, weekdayNames } from "../../src/domain/stats-period.js";

describe("stats periods", () => {
  const now = Date.parse("2024-02-29T23:59:59.999Z");

  it("formats points like Go's time.String() in UTC", () => {
    expect(goTimeString(Date.parse("2025-10-01T11:33:00Z"))).toBe("2025-10-01 11:33:00 +0000 UTC");
    expect(goTimeString(Date.parse("0999-01-02T03:04:05Z"))).toBe("0999-01-02 03:04:05 +0000 UTC");
  });

  it("ends every window with the step that holds now", () => {
    for (const period of ["1h", "3h", "12h", "1d", "3d", "7d", "30d"] as const) {
      const w = periodWindow(period, now);
      const lastStart = w.from + (w.points - 1) * w.stepMs;
      expect(lastStart).toBeLessThanOrEqual(now);
      expect(lastStart + w.stepMs).toBeGreaterThan(now);
      expect(w.points * w.stepMs).toBe(
        { "1h": 1, "3h": 3, "12h": 12, "1d": 24, "3d": 72, "7d": 168, "30d": 720 }[period] * 3_600_000,
      );
    }
    expect(periodWindow("30d", now).points).toBe(240);
  });

  it("covers the whole month, leap days included", () => {
    const month = monthWindow(now);
    expect(month.points).toBe(29);
    expect(goTimeString(month.from)).toBe("2024-02-01 00:00:00 +0000 UTC");
    const days = weekdayNames(month);
    expect(days[0]).toBe("Thursday");
    expect(days[28]).toBe("Thursday");
    expect(monthWindow(Date.parse("2025-12-31T12:00:00Z")).points).toBe(31);
  });
});
