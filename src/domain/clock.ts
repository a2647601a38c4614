/** Time is injected, never read directly (style habit 2): services and loops take a Clock. */
export interface Clock {
  now(): number;
  /**
   * For clocks that follow real time: the offset to it, so code in another thread (the store thread) can read the
   * same clock as `Date.now() + offset`. Absent for a pinned clock.
   */
  liveOffsetMs?(): number;
}

export const systemClock: Clock = { now: () => Date.now(), liveOffsetMs: () => 0 };

/** A clock tests can pin and advance; `offsetMs` shifts real time so timers still fire. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.now()) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/** Real time shifted by an offset that tests (or an operator) can move, e.g. to cross a rate period. */
export class OffsetClock implements Clock {
  offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  liveOffsetMs(): number {
    return this.offsetMs;
  }
}
