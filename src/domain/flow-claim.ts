import {
  capacity,
  decide,
  FLOW_RECHECK_MS,
  type FlowKeyState,
  globalParallelismOf,
  recordStart,
} from "./flow-window.js";

/**
 * Where a flow-control slot is taken (docs/flow-control.md): the claim's decisions, once for both storage adapters.
 * The adapters lock and load the flow rows (src/store/sqlite/flow-control.ts, src/store/postgres/flow-control.ts),
 * ask these functions, and apply the answers with their own SQL. Nothing here does I/O; `decideCandidate` records a
 * start on the slots it is given, so a claim round asks it candidate by candidate, oldest first.
 *
 * The per-key rules themselves (pause, parallelism, rate windows) are in flow-window.ts.
 */

/** Largest number of waiting rows one wake step releases for one key or account: keeps transactions short. */
export const RELEASE_MAX = 1000;
/** Keys and accounts woken per claim; the rest wait for the next claim (their wake time is already due). */
export const WAKE_BATCH = 200;

/** A flow-control key as one claim sees it: its configuration and window, and its deliveries in flight. */
export interface ClaimKey {
  state: FlowKeyState;
  active: number;
  /** Its window or wake time changed in this claim: the adapter saves it at the end. */
  dirty: boolean;
}

/** An account as one claim sees it: its global bound and its deliveries in flight. */
export interface ClaimAccount {
  cap: number;
  active: number;
  /** This claim parked candidates for the account's global bound. */
  parked: boolean;
}

/** What happens to a candidate: it starts (ACTIVE), or waits (WAITING) for its key or for its account's bound. */
export type ClaimDecision = "start" | "key" | "global";

/** The account-wide bound on deliveries in flight; an account without a record (plan null) has none. */
export const accountCap = (plan: string | null): number =>
  plan === null ? Number.POSITIVE_INFINITY : globalParallelismOf(plan);

/**
 * One candidate of the claim, in arrival order: its key admits it (not paused, parallelism and rate window not used
 * up), then its account's max_global_parallelism does. A start is recorded on both slots at once, so the next
 * candidate of the same key or account sees it.
 */
export function decideCandidate(account: ClaimAccount, key: ClaimKey | undefined, now: number): ClaimDecision {
  if (key && !decide(key.state, key.active, now).admit) {
    key.dirty = true;
    return "key";
  }
  if (account.active >= account.cap) {
    account.parked = true;
    return "global";
  }
  account.active++;
  if (key) {
    key.active++;
    key.state = recordStart(key.state, now);
    key.dirty = true;
  }
  return "start";
}

/** How many of a key's waiting messages one wake step releases (oldest first). */
export const keyReleaseRoom = (key: Pick<ClaimKey, "state" | "active">, now: number): number =>
  Math.min(capacity(key.state, key.active, now), RELEASE_MAX);

/** How many of an account's messages waiting for its global bound one wake step releases (oldest first). */
export const accountReleaseRoom = (account: Pick<ClaimAccount, "cap" | "active">): number =>
  Math.min(account.cap - account.active, RELEASE_MAX);

/** How many candidate rows one claim reads at most, so that a claim facing only blocked rows still ends. */
export const claimScanBudget = (limit: number): number => Math.max(limit * 4, 2000);

/**
 * When an account's global wait list is looked at again, if it still has one after this claim: after the safety
 * net, or after `firstParkRecheckMs` when this claim started the wait list (PostgreSQL: a finish at that moment may
 * not have seen it; src/store/postgres/flow-control.ts says why).
 */
export function accountWakeAt(now: number, firstPark: boolean, firstParkRecheckMs = FLOW_RECHECK_MS): number {
  return now + (firstPark ? firstParkRecheckMs : FLOW_RECHECK_MS);
}

/**
 * The publish fast path (a message inserted already ACTIVE): how many more of the account's messages may start that
 * way. None while messages wait for the global bound (no overtaking them); an account without a record has no bound.
 * `active` may be an upper bound of the deliveries in flight: too high only sends messages through the claim.
 */
export function fastPathRoom(account: { plan: string | null; waiting: boolean; active: number }): number {
  if (account.plan === null) return Number.POSITIVE_INFINITY;
  if (account.waiting) return 0;
  return accountCap(account.plan) - account.active;
}

/**
 * Waking when a delivery leaves ACTIVE (a finish of any outcome, a rescued lease, a cancel): it frees a slot of its
 * account and of its key, so their wait lists may move. A wait list that exists (wake time set) becomes due at once:
 * wake time 0, due on every node's clock. The key's only when it has a parallelism limit (a finish frees no room in
 * a rate window). PostgreSQL runs this rule server-side, in the trigger `ferry_flow_wake` (migration 005), because it
 * must hold on every path that moves a row out of ACTIVE at no extra round trip, and under the row lock the claim
 * also takes (src/store/postgres/flow-control.ts says why that matters); test/store/rules-in-sql.test.ts runs the same
 * cases through this function and the trigger. SQLite wakes from the finish itself (flow-control.ts `afterFinish`):
 * its single writer cannot miss a claim, so it simply marks both wait lists due.
 */
export function wakeOnLeavingActive(p: {
  accountWakeAt: number | null;
  key?: { parallelism: number | null; wakeAt: number | null };
}): { accountWakeAt: number | null; keyWakeAt?: number | null } {
  const out: { accountWakeAt: number | null; keyWakeAt?: number | null } = {
    accountWakeAt: p.accountWakeAt === null ? null : 0,
  };
  if (p.key) out.keyWakeAt = p.key.parallelism === null || p.key.wakeAt === null ? p.key.wakeAt : 0;
  return out;
}
