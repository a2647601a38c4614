import { describe, expect, it } from "vitest";
import {
  accountCap,
  accountReleaseRoom,
  accountWakeAt,
  type ClaimAccount,
  type ClaimKey,
  claimScanBudget,
  decideCandidate,
  fastPathRoom,
  keyReleaseRoom,
  RELEASE_MAX,
  wakeOnLeavingActive,
} from "../../src/domain/flow-claim.js";
import { FLOW_RECHECK_MS, type FlowKeyState } from "../../src/domain/flow-window.js";
import { plans } from "../../src/domain/plans.js";

/**
 * The claim's decisions (src/domain/flow-claim.ts) without a database; test/store/flow-control.test.ts runs them
 * through both adapters.
 */
const NOW = 1_700_000_000_000;

const key = (state: Partial<FlowKeyState>, active = 0): ClaimKey => ({
  state: { periodSec: 1, rateCount: 0, periodStart: 0, paused: false, ...state },
  active,
  dirty: false,
});
const account = (cap: number, active = 0): ClaimAccount => ({ cap, active, parked: false });

describe("the claim decides each candidate in arrival order", () => {
  it("starts candidates until the key's parallelism is used up, then parks them for the key", () => {
    const k = key({ parallelism: 2 });
    const a = account(100);
    const decisions = [1, 2, 3, 4].map(() => decideCandidate(a, k, NOW));
    expect(decisions).toEqual(["start", "start", "key", "key"]);
    expect(k.active).toBe(2);
    expect(a.active).toBe(2);
    expect(k.dirty).toBe(true);
    expect(a.parked).toBe(false);
  });

  it("counts starts against the rate window and opens a new window once the period is over", () => {
    const k = key({ rate: 2, periodSec: 10 });
    const a = account(100);
    expect([1, 2, 3].map(() => decideCandidate(a, k, NOW))).toEqual(["start", "start", "key"]);
    expect(k.state).toMatchObject({ rateCount: 2, periodStart: NOW });
    // Still in the window: parked. One period later: a new window starts at that moment.
    expect(decideCandidate(a, k, NOW + 9_999)).toBe("key");
    expect(decideCandidate(a, k, NOW + 10_000)).toBe("start");
    expect(k.state).toMatchObject({ rateCount: 1, periodStart: NOW + 10_000 });
  });

  it("parks every candidate of a paused key, whatever room is left", () => {
    const k = key({ paused: true });
    expect(decideCandidate(account(100), k, NOW)).toBe("key");
    expect(k.active).toBe(0);
  });

  it("parks for the account's global bound once it is reached, keyed or not, and records that it parked", () => {
    const a = account(2, 1);
    const k = key({});
    expect(decideCandidate(a, undefined, NOW)).toBe("start");
    expect(decideCandidate(a, k, NOW)).toBe("global");
    expect(decideCandidate(a, undefined, NOW)).toBe("global");
    expect(a.parked).toBe(true);
    expect(k.active).toBe(0);
    expect(k.state.rateCount).toBe(0);
  });

  it("asks the key first: a candidate blocked by its key does not take the account's last slot", () => {
    const a = account(1);
    expect(decideCandidate(a, key({ parallelism: 0 }), NOW)).toBe("key");
    expect(a).toMatchObject({ active: 0, parked: false });
    expect(decideCandidate(a, undefined, NOW)).toBe("start");
  });

  it("an account without a record has no global bound", () => {
    expect(accountCap(null)).toBe(Number.POSITIVE_INFINITY);
    expect(accountCap("free")).toBe(plans.free.max_global_parallelism);
    // An unknown plan name gets the pay-as-you-go limits (domain/flow-window.ts globalParallelismOf).
    expect(accountCap("no-such-plan")).toBe(plans.paid.max_global_parallelism);
  });
});

describe("wake steps release what there is room for, in bounded steps", () => {
  it("a key releases its free parallelism or what is left of its window, never more than RELEASE_MAX", () => {
    expect(keyReleaseRoom(key({ parallelism: 5 }, 2), NOW)).toBe(3);
    expect(keyReleaseRoom(key({ rate: 4, rateCount: 3, periodStart: NOW }), NOW)).toBe(1);
    expect(keyReleaseRoom(key({ paused: true, parallelism: 5 }), NOW)).toBe(0);
    expect(keyReleaseRoom(key({ parallelism: 1 }, 3), NOW)).toBe(0);
    expect(keyReleaseRoom(key({}), NOW)).toBe(RELEASE_MAX);
  });

  it("an account releases up to its bound, never more than RELEASE_MAX", () => {
    expect(accountReleaseRoom({ cap: 10, active: 7 })).toBe(3);
    expect(accountReleaseRoom({ cap: 10, active: 12 })).toBeLessThanOrEqual(0);
    expect(accountReleaseRoom({ cap: Number.POSITIVE_INFINITY, active: 0 })).toBe(RELEASE_MAX);
  });

  it("an account's wait list is looked at again after the safety net, sooner when this claim started it", () => {
    expect(accountWakeAt(NOW, false)).toBe(NOW + FLOW_RECHECK_MS);
    expect(accountWakeAt(NOW, true, 1000)).toBe(NOW + 1000);
    expect(accountWakeAt(NOW, false, 1000)).toBe(NOW + FLOW_RECHECK_MS);
  });

  it("a claim reads a bounded number of candidates", () => {
    expect(claimScanBudget(10)).toBe(2000);
    expect(claimScanBudget(1000)).toBe(4000);
  });
});

describe("the publish fast path", () => {
  it("has room under the account's bound, none while messages wait for it, and no bound without a record", () => {
    const cap = plans.free.max_global_parallelism;
    expect(fastPathRoom({ plan: "free", waiting: false, active: 0 })).toBe(cap);
    expect(fastPathRoom({ plan: "free", waiting: false, active: cap })).toBeLessThanOrEqual(0);
    expect(fastPathRoom({ plan: "free", waiting: true, active: 0 })).toBe(0);
    expect(fastPathRoom({ plan: null, waiting: true, active: 10 ** 6 })).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("waking when a delivery leaves ACTIVE", () => {
  it("makes existing wait lists due at once: the account's always, the key's when it has a parallelism limit", () => {
    expect(wakeOnLeavingActive({ accountWakeAt: null })).toEqual({ accountWakeAt: null });
    expect(wakeOnLeavingActive({ accountWakeAt: NOW })).toEqual({ accountWakeAt: 0 });
    expect(wakeOnLeavingActive({ accountWakeAt: null, key: { parallelism: 2, wakeAt: NOW } })).toEqual({
      accountWakeAt: null,
      keyWakeAt: 0,
    });
    expect(wakeOnLeavingActive({ accountWakeAt: null, key: { parallelism: 2, wakeAt: null } }).keyWakeAt).toBeNull();
    expect(wakeOnLeavingActive({ accountWakeAt: null, key: { parallelism: null, wakeAt: NOW } }).keyWakeAt).toBe(NOW);
  });
});
