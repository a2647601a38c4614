/**
 * Time arithmetic of usage statistics (docs/management.md "Usage statistics"), pure: every function takes `now`.
 * Every period has 60 points at even steps (1h: one a minute), 30d has 240 at 3-hour steps. Steps are aligned to
 * multiples of the step since the Unix epoch and the last point holds the current, partial step.
 */
export const statsPeriods = {
  "1h": { stepMs: 60_000, points: 60 },
  "3h": { stepMs: 3 * 60_000, points: 60 },
  "12h": { stepMs: 12 * 60_000, points: 60 },
  "1d": { stepMs: 24 * 60_000, points: 60 },
  "3d": { stepMs: 72 * 60_000, points: 60 },
  "7d": { stepMs: 168 * 60_000, points: 60 },
  "30d": { stepMs: 3 * 3_600_000, points: 240 },
} as const;

export type StatsPeriod = keyof typeof statsPeriods;

export function isStatsPeriod(value: string): value is StatsPeriod {
  return Object.hasOwn(statsPeriods, value);
}

export interface Window {
  /** Unix ms of the first point. */
  from: number;
  stepMs: number;
  points: number;
}

export function periodWindow(period: StatsPeriod, now: number): Window {
  const { stepMs, points } = statsPeriods[period];
  const end = now - (now % stepMs) + stepMs;
  return { from: end - points * stepMs, stepMs, points };
}

const DAY_MS = 86_400_000;

/** The current UTC month, one point per day, future days included. */
export function monthWindow(now: number): Window {
  const d = new Date(now);
  const from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const points = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  return { from, stepMs: DAY_MS, points };
}

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

export function weekdayNames(month: Window): string[] {
  return Array.from({ length: month.points }, (_, i) => WEEKDAYS[new Date(month.from + i * DAY_MS).getUTCDay()]!);
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** Go's `time.Time.String()` of a UTC time with whole seconds: `2025-10-01 11:33:00 +0000 UTC`. */
export function goTimeString(ms: number): string {
  const d = new Date(ms);
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return `${date} ${time} +0000 UTC`;
}
