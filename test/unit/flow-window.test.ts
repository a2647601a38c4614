import { describe, expect, it } from "vitest";
import {
  capacity,
  decide,
  FLOW_RECHECK_MS,
  type FlowKeyState,
  globalParallelismOf,
  mergeConfig,
  nextWakeAt,
  recordStart,
  sameLimits,
  windowAt,
} from "../../src/domain/flow-window.js";

const T0 = 1_700_000_000_000;
const key = (s: Partial<FlowKeyState> = {}): FlowKeyState => ({
  periodSec: 1,
  rateCount: 0,
  periodStart: 0,
  paused: false,
  ...s,
});

describe("windowAt", () => {
  it("keeps the running window and opens a new one at now once the period is over", () => {
    const s = key({ rate: 3, periodSec: 60, rateCount: 2, periodStart: T0 });
    expect(windowAt(s, T0 + 59_999)).toEqual({ rateCount: 2, periodStart: T0 });
    expect(windowAt(s, T0 + 60_000)).toEqual({ rateCount: 0, periodStart: T0 + 60_000 });
    expect(windowAt(s, T0 + 500_000)).toEqual({ rateCount: 0, periodStart: T0 + 500_000 });
  });
});

describe("decide and recordStart", () => {
  it("admits up to the rate in one window, then holds until the period is over", () => {
    let s = key({ rate: 3, periodSec: 86_400 });
    for (let i = 0; i < 3; i++) {
      expect(decide(s, 0, T0 + i)).toEqual({ admit: true });
      s = recordStart(s, T0 + i);
    }
    expect(s).toMatchObject({ rateCount: 3, periodStart: T0 });
    expect(decide(s, 0, T0 + 1000)).toEqual({ admit: false, reason: "rate" });
    expect(decide(s, 0, T0 + 86_399_999)).toEqual({ admit: false, reason: "rate" });
    expect(decide(s, 0, T0 + 86_400_000)).toEqual({ admit: true });
    expect(recordStart(s, T0 + 86_400_000)).toMatchObject({ rateCount: 1, periodStart: T0 + 86_400_000 });
  });

  it("holds at the parallelism limit whatever the rate", () => {
    const s = key({ parallelism: 2, rate: 100 });
    expect(decide(s, 1, T0)).toEqual({ admit: true });
    expect(decide(s, 2, T0)).toEqual({ admit: false, reason: "parallelism" });
    expect(decide(s, 5, T0)).toEqual({ admit: false, reason: "parallelism" });
  });

  it("holds everything while paused", () => {
    expect(decide(key({ parallelism: 5, paused: true }), 0, T0)).toEqual({ admit: false, reason: "paused" });
  });

  it("does not count starts when the key has no rate", () => {
    const s = key({ parallelism: 1 });
    expect(recordStart(s, T0)).toBe(s);
  });
});

describe("capacity", () => {
  it("is the smaller of the free parallelism and the rate left in the window", () => {
    expect(capacity(key({ parallelism: 5, rate: 3, rateCount: 1, periodStart: T0 }), 1, T0 + 10)).toBe(2);
    expect(capacity(key({ parallelism: 5, rate: 3, rateCount: 3, periodStart: T0 }), 1, T0 + 10)).toBe(0);
    // The window is over: the whole rate is available again.
    expect(capacity(key({ parallelism: 5, rate: 3, rateCount: 3, periodStart: T0 }), 1, T0 + 1000)).toBe(3);
    expect(capacity(key({ parallelism: 2 }), 7, T0)).toBe(0);
    expect(capacity(key({ parallelism: 2, paused: true }), 0, T0)).toBe(0);
    expect(capacity(key({ rate: 3 }), 0, T0)).toBe(3);
  });
});

describe("nextWakeAt", () => {
  it("wakes at the end of a used-up window, never while paused, else after the safety interval", () => {
    const used = key({ rate: 3, periodSec: 60, rateCount: 3, periodStart: T0 });
    expect(nextWakeAt(used, T0 + 5)).toBe(T0 + 60_000);
    expect(nextWakeAt({ ...used, paused: true }, T0 + 5)).toBeUndefined();
    expect(nextWakeAt(key({ parallelism: 1 }), T0)).toBe(T0 + FLOW_RECHECK_MS);
  });
});

describe("mergeConfig", () => {
  const current = { parallelism: 2, rate: 10, periodSec: 60 };
  it("takes the message's configuration, part by part, unless pinned", () => {
    const incoming = { parallelism: 5, periodSec: 1 };
    expect(mergeConfig(current, incoming, { pinnedParallelism: false, pinnedRate: false })).toEqual({
      parallelism: 5,
      periodSec: 1,
    });
    expect(mergeConfig(current, incoming, { pinnedParallelism: true, pinnedRate: false })).toEqual({
      parallelism: 2,
      periodSec: 1,
    });
    expect(mergeConfig(current, incoming, { pinnedParallelism: false, pinnedRate: true })).toEqual({
      parallelism: 5,
      rate: 10,
      periodSec: 60,
    });
  });

  it("compares limits", () => {
    expect(sameLimits(current, { ...current })).toBe(true);
    expect(sameLimits(current, { ...current, periodSec: 1 })).toBe(false);
    expect(sameLimits({ periodSec: 1, rate: 1 }, { periodSec: 1, parallelism: 1 })).toBe(false);
  });
});

describe("globalParallelismOf", () => {
  it("follows the plan, with the pay-as-you-go limits for an unknown plan", () => {
    expect(globalParallelismOf("free")).toBe(10);
    expect(globalParallelismOf("msgsvc_fixed_1m")).toBe(200);
    expect(globalParallelismOf("no-such-plan")).toBe(globalParallelismOf("paid"));
    expect(globalParallelismOf("constructor")).toBe(globalParallelismOf("paid"));
  });
});
