import { describe, expect, it } from "vitest";
import { nextTickAfter, parseCron } from "../../src/domain/cron.js";
import { MISSED_TICK_GRACE_MS, parseScheduleId, planDueTick } from "../../src/domain/schedule.js";
import { AppError } from "../../src/errors.js";

const at = (iso: string) => Date.parse(iso);
const MIN = 60_000;

describe("parseCron", () => {
  it("trims, keeps the CRON_TZ prefix in the stored text, and evaluates in UTC by default", () => {
    expect(parseCron("  */10 * * * *  ", "Svc-Cron")).toEqual({
      text: "*/10 * * * *",
      pattern: "*/10 * * * *",
      timezone: "UTC",
    });
    const tz = parseCron(" CRON_TZ=Europe/Berlin  0 9 * * 1-5 ", "Svc-Cron");
    expect(tz).toEqual({
      text: "CRON_TZ=Europe/Berlin  0 9 * * 1-5",
      pattern: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
    });
    expect(nextTickAfter(parseCron("0 9 * * *", "Svc-Cron"), at("2030-01-07T08:00:00Z"))).toBe(
      at("2030-01-07T09:00:00Z"),
    );
    expect(nextTickAfter(tz, at("2030-01-07T07:00:00Z"))).toBe(at("2030-01-07T08:00:00Z")); // 09:00 CET
  });

  it("accepts croner's nicknames as one field", () => {
    const daily = parseCron("@daily", "Svc-Cron");
    expect(nextTickAfter(daily, at("2030-01-07T08:00:00Z"))).toBe(at("2030-01-08T00:00:00Z"));
  });

  it("rejects bad expressions with a 400 naming the field", () => {
    for (const bad of [
      "",
      "* * * *",
      "* * * * * *",
      "61 * * * *",
      "* * 32 * *",
      "CRON_TZ=Nowhere/City * * * * *",
      "CRON_TZ=UTC",
      "0 0 30 2 *",
    ]) {
      let error: unknown;
      try {
        parseCron(bad, "Svc-Cron");
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(400);
      expect((error as AppError).message, bad).toMatch(/^invalid Svc-Cron: /);
    }
  });

  it("handles both daylight-saving changes of a zone", () => {
    const ny = parseCron("CRON_TZ=America/New_York 30 2 * * *", "Svc-Cron");
    // Spring forward (8 March 2026): 02:30 does not exist; it fires at 03:00 EDT, once.
    expect(nextTickAfter(ny, at("2026-03-07T07:30:00Z"))).toBe(at("2026-03-08T07:00:00Z"));
    expect(nextTickAfter(ny, at("2026-03-08T07:00:00Z"))).toBe(at("2026-03-09T06:30:00Z"));
    // Fall back (1 November 2026): 01:30 happens twice; it fires once.
    const nyBack = parseCron("CRON_TZ=America/New_York 30 1 * * *", "Svc-Cron");
    expect(nextTickAfter(nyBack, at("2026-10-31T12:00:00Z"))).toBe(at("2026-11-01T05:30:00Z"));
    expect(nextTickAfter(nyBack, at("2026-11-01T05:30:00Z"))).toBe(at("2026-11-02T06:30:00Z"));
  });
});

describe("planDueTick", () => {
  const everyMinute = parseCron("* * * * *", "Svc-Cron");
  const hourly = parseCron("0 * * * *", "Svc-Cron");
  const base = at("2030-01-07T12:00:00Z");

  it("fires a due tick and moves to the following one", () => {
    expect(planDueTick(everyMinute, base, base + 1000, false)).toEqual({ fireTick: base, nextRunAt: base + MIN });
  });

  it("fires the latest tick at most 60 s old once, and skips older ones", () => {
    // Stored tick 3 minutes old: the ticks at -3, -2 are skipped; the one 1 s inside the window fires.
    const now = base + 3 * MIN + 59_000;
    expect(planDueTick(everyMinute, base + MIN, now, false)).toEqual({
      fireTick: base + 3 * MIN,
      nextRunAt: base + 4 * MIN,
    });
    expect(planDueTick(hourly, base, base + MISSED_TICK_GRACE_MS, false)).toEqual({
      fireTick: base,
      nextRunAt: base + 60 * MIN,
    });
    expect(planDueTick(hourly, base, base + MISSED_TICK_GRACE_MS + 1, false)).toEqual({ nextRunAt: base + 60 * MIN });
    expect(planDueTick(hourly, base - 5 * 60 * MIN, base + 90_000, false)).toEqual({ nextRunAt: base + 60 * MIN });
  });

  it("lets a paused schedule's ticks pass without firing", () => {
    expect(planDueTick(everyMinute, base, base + 1000, true)).toEqual({ nextRunAt: base + MIN });
  });
});

describe("parseScheduleId", () => {
  it("accepts letters, digits, '-', '_' and '.', and names the field otherwise", () => {
    expect(parseScheduleId("nightly.report_1-a", "Svc-Schedule-Id")).toBe("nightly.report_1-a");
    for (const bad of ["", "a b", "a/b", "ä", "x".repeat(257)]) {
      expect(() => parseScheduleId(bad, "Svc-Schedule-Id"), bad).toThrow(/^invalid Svc-Schedule-Id: /);
    }
  });
});
