import { describe, expect, it } from "vitest";
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from "../../src/heap-growth.js";

// The serve commands limit V8's old-generation growth (src/heap-growth.ts, bench P4's peak RSS) unless the operator
// set the heap's growth or size themselves.
describe("heapGrowthFlag", () => {
  it("sets the growth when nothing names it", () => {
    expect(heapGrowthFlag([], undefined)).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(heapGrowthFlag(["--enable-source-maps"], "--trace-warnings")).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  });

  it("leaves the operator's choice on the command line or in NODE_OPTIONS", () => {
    expect(heapGrowthFlag(["--heap-growing-percent=100"], undefined)).toBeUndefined();
    expect(heapGrowthFlag([], "--enable-source-maps --max-old-space-size=512")).toBeUndefined();
    expect(heapGrowthFlag(["--max_old_space_size=512"], "")).toBeUndefined();
    expect(heapGrowthFlag([], "--heap_growing_percent=0")).toBeUndefined();
  });

  it("is not fooled by a flag that only starts the same way", () => {
    expect(heapGrowthFlag(["--max-old-space-size-limit"], undefined)).toBeDefined();
  });
});
