import { describe, expect, it } from "vitest";
import { availableParallelism } from "node:os";
import { egressThreadWanted, loadConfig } from "../../src/config.js";

describe("FERRY_EGRESS_THREAD", () => {
  it("auto starts the egress thread only where the process may run on more than one CPU", () => {
    expect(egressThreadWanted("auto", 1)).toBe(false);
    expect(egressThreadWanted("auto", 2)).toBe(true);
    expect(egressThreadWanted("on", 1)).toBe(true);
    expect(egressThreadWanted("off", 8)).toBe(false);
  });

  it("defaults to auto, takes on and off in any case, and names itself when the value is wrong", () => {
    expect(loadConfig({}).egressThread).toBe(availableParallelism() > 1);
    expect(loadConfig({ FERRY_EGRESS_THREAD: "ON" }).egressThread).toBe(true);
    expect(loadConfig({ FERRY_EGRESS_THREAD: "off" }).egressThread).toBe(false);
    expect(() => loadConfig({ FERRY_EGRESS_THREAD: "yes" })).toThrow(
      /FERRY_EGRESS_THREAD must be one of auto, on, off \(got "yes"\)/,
    );
  });
});
