import type { FlowControlSpec } from "./flow-control-value.js";
import { isPlanName, plans } from "./plans.js";

/**
 * Pure flow-control decisions (docs/flow-control.md). The store keeps the state and calls these inside its
 * claim transaction, so the limits hold across every node that shares the database.
 *
 * Rate windows are fixed windows that start at the first start after the previous window ended (not aligned to
 * the clock): at most `rate` deliveries start in [periodStart, periodStart + period), and a new window never begins
 * before the previous one is over, so bursts are always at least one period apart.
 */

/** Configuration of a key: absent parallelism or rate means that part is unlimited. */
export interface FlowLimits {
  parallelism?: number;
  rate?: number;
  periodSec: number;
}

/** The rate window: how many deliveries started in the window that began at `periodStart` (unix ms). */
export interface FlowWindow {
  rateCount: number;
  periodStart: number;
}

export interface FlowKeyState extends FlowLimits, FlowWindow {
  paused: boolean;
}

export interface FlowPins {
  pinnedParallelism: boolean;
  pinnedRate: boolean;
}

export type WaitReason = "paused" | "parallelism" | "rate";

export type Verdict = { admit: true } | { admit: false; reason: WaitReason };

/**
 * How long a key blocked by parallelism waits before its wait list is looked at again even if no finish woke it.
 * Finishing deliveries wake the key at once; this is only the safety net for slots freed some other way (a lease
 * rescued from a dead node, a row removed by an operator). (Default: 10 s)
 */
export const FLOW_RECHECK_MS = 10_000;

export const periodMs = (s: Pick<FlowLimits, "periodSec">): number => s.periodSec * 1000;

/** The window in force at `now`: once the period is over, the next start opens a new window at `now`. */
export function windowAt(s: FlowKeyState, now: number): FlowWindow {
  if (now >= s.periodStart + periodMs(s)) return { rateCount: 0, periodStart: now };
  return { rateCount: s.rateCount, periodStart: s.periodStart };
}

/** Whether one more delivery of the key may start now, given how many of its deliveries are in flight. */
export function decide(s: FlowKeyState, active: number, now: number): Verdict {
  if (s.paused) return { admit: false, reason: "paused" };
  if (s.parallelism !== undefined && active >= s.parallelism) return { admit: false, reason: "parallelism" };
  if (s.rate !== undefined && windowAt(s, now).rateCount >= s.rate) return { admit: false, reason: "rate" };
  return { admit: true };
}

/** The state after one delivery started: the window rolls over if due, and the start counts against the rate. */
export function recordStart(s: FlowKeyState, now: number): FlowKeyState {
  if (s.rate === undefined) return s;
  const w = windowAt(s, now);
  return { ...s, rateCount: w.rateCount + 1, periodStart: w.periodStart };
}

/** How many more deliveries of the key may start now (Infinity when nothing limits it). */
export function capacity(s: FlowKeyState, active: number, now: number): number {
  if (s.paused) return 0;
  let free = Number.POSITIVE_INFINITY;
  if (s.parallelism !== undefined) free = Math.min(free, s.parallelism - active);
  if (s.rate !== undefined) free = Math.min(free, s.rate - windowAt(s, now).rateCount);
  return Math.max(0, free);
}

/**
 * When a key that still has a wait list should be looked at again: never while paused (resume wakes it), at the end
 * of the window when the rate is used up, otherwise after the safety-net interval. Finishing deliveries, resume,
 * reset, pin and configuration changes wake the key at once; this is only for the window and the safety net.
 */
export function nextWakeAt(s: FlowKeyState, now: number): number | undefined {
  if (s.paused) return undefined;
  if (s.rate !== undefined) {
    const w = windowAt(s, now);
    if (w.rateCount >= s.rate) return w.periodStart + periodMs(s);
  }
  return now + FLOW_RECHECK_MS;
}

/**
 * A message's own Svc-Flow-Control-Value updates the key's configuration, except for the pinned parts
 * (docs/flow-control.md: "incoming messages can no longer change it"). The rate part is `rate` with its `period`.
 */
export function mergeConfig(current: FlowLimits, incoming: FlowControlSpec, pins: FlowPins): FlowLimits {
  const next: FlowLimits = { periodSec: pins.pinnedRate ? current.periodSec : incoming.periodSec };
  const parallelism = pins.pinnedParallelism ? current.parallelism : incoming.parallelism;
  const rate = pins.pinnedRate ? current.rate : incoming.rate;
  if (parallelism !== undefined) next.parallelism = parallelism;
  if (rate !== undefined) next.rate = rate;
  return next;
}

export const sameLimits = (a: FlowLimits, b: FlowLimits): boolean =>
  a.parallelism === b.parallelism && a.rate === b.rate && a.periodSec === b.periodSec;

/** The account-wide bound on deliveries in flight (`max_global_parallelism` of its plan). */
export function globalParallelismOf(plan: string): number {
  // The same fallback as limitsOf(): an unknown plan name gets the pay-as-you-go limits.
  return (isPlanName(plan) ? plans[plan] : plans.paid).max_global_parallelism;
}
