import { describe, expect, it } from "vitest";
import { MAX_PACE_MS, noteWriters, publishRunPace } from "../../src/store/postgres/run-pace.js";

/** The cadence of a busy node's publish runs with several nodes (src/store/postgres/run-pace.ts). */
describe("publish run pace", () => {
  it("spaces a busy node's runs by as many run durations as nodes publish, at most MAX_PACE_MS", () => {
    noteWriters(3);
    expect(publishRunPace({ runMs: 4, lastRunOps: 6 })).toBe(12);
    expect(publishRunPace({ runMs: 40, lastRunOps: 6 })).toBe(MAX_PACE_MS);
  });

  it("does not pace a node alone, nor one whose last run held a single publish (low load keeps its latency)", () => {
    noteWriters(3);
    expect(publishRunPace({ runMs: 4, lastRunOps: 1 })).toBe(0);
    noteWriters(1);
    expect(publishRunPace({ runMs: 4, lastRunOps: 6 })).toBe(0);
    noteWriters(0);
    expect(publishRunPace({ runMs: 4, lastRunOps: 6 })).toBe(0);
  });
});
