/**
 * Node keeps a timer's delay in a 32-bit signed integer: a longer delay (a message due in a year) is replaced by 1 ms
 * with a `TimeoutOverflowWarning`, so the timer fires at once and, re-armed, spins (docs/reliability.md, "Timers").
 * Every `setTimeout`/`setInterval` in src/ passes its delay through `timerDelay` (test/unit/timers.test.ts checks);
 * a clamped timer fires early and its owner re-arms it for what remains.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a delay Node accepts: 0..MAX_TIMER_MS (NaN counts as 0). */
export function timerDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return Math.min(ms, MAX_TIMER_MS);
}
