/**
 * The time a claim really runs at (see `messageLeaseDue` in store.ts): its `now`, or later when the caller's clock
 * follows real time and the claim waited (for locks, or behind other writes). Reading `Date.now()` here is reading
 * the caller's clock: it said it is real time plus `liveClockOffsetMs`.
 */
export function claimTime(p: { now: number; liveClockOffsetMs?: number }): number {
  return p.liveClockOffsetMs === undefined ? p.now : Math.max(p.now, Date.now() + p.liveClockOffsetMs);
}
