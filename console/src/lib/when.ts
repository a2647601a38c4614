/**
 * One format for every time of a table (the Schedules view): the date and the minute in the browser's zone, always
 * with the date (a table mixing "20:15:00" and "23 Nov 2026, 20:15:00" reads badly), the year only when it is not
 * this one. `now` is a parameter so tests pin it.
 */
export function tableTime(ms: number, now = Date.now()): string {
  const d = new Date(ms);
  const sameYear = d.getFullYear() === new Date(now).getFullYear();
  return d.toLocaleString(undefined, {
    weekday: "short",
    day: "numeric",
    month: "short",
    ...(sameYear ? {} : { year: "numeric" }),
    hour: "2-digit",
    minute: "2-digit",
  });
}

/** Milliseconds as people read a latency: `850 ms`, `1.2 s`, `3 min 5 s`, `2 h 10 min`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
  const m = Math.round(s / 60);
  return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ""}`;
}

/** A share as a percentage with one decimal, never rounding 99.96 % up to a perfect 100 %. */
export function percentText(share: number): string {
  const tenths = Math.floor(share * 1000) / 10;
  return `${Number.isInteger(tenths) ? tenths.toFixed(0) : tenths.toFixed(1)} %`;
}
