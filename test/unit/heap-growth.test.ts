import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { getHeapStatistics } from "node:v8";
import { describe, expect, it } from "vitest";
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from "../../src/heap-growth.js";

// The serve commands limit V8's old-generation growth (src/heap-growth.ts, bench P4's peak RSS) unless the operator
// set the growth on the command line.
describe("heapGrowthFlag", () => {
  const ours = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;

  it("sets the growth when the command line does not", () => {
    expect(heapGrowthFlag([])).toBe(ours);
    expect(heapGrowthFlag(["--enable-source-maps", "--max-old-space-size=512"])).toBe(ours);
  });

  it("leaves the operator's growth as given", () => {
    expect(heapGrowthFlag(["--heap-growing-percent=0"])).toBeUndefined();
    expect(heapGrowthFlag(["--trace-gc", "--heap_growing_percent=300"])).toBeUndefined();
  });

  it("is not fooled by a flag that only starts the same way", () => {
    expect(heapGrowthFlag(["--heap-growing-percentile=5"])).toBe(ours);
  });
});

/**
 * The flag set at run time takes effect (V8 reads it at each full collection): a child keeps ~20 MiB alive and churns
 * objects that outlive scavenges, as publishes waiting for their commit do, and reports its peak of used heap. With
 * V8's own choice on a heap limit of 2 GiB or more (growth up to 4×) the peak is ~270 MiB on this machine; limited, ~150.
 */
const CHURN = `
import { getHeapStatistics } from "node:v8";
if (process.argv[1] === "limit") (await import(process.argv[2])).limitHeapGrowth();
const live = Array.from({ length: 200_000 }, (_, i) => ({ i, s: "live-" + i, a: [i, i + 1] }));
const held = [];
let peak = 0;
for (let round = 0; round < 400; round++) {
  held.push(Array.from({ length: 20_000 }, (_, i) => ({ round, i, s: "g-" + round + "-" + i, a: [i] })));
  if (held.length > 8) held.shift();
  peak = Math.max(peak, getHeapStatistics().used_heap_size);
}
process.stdout.write(String(live.length > 0 ? peak : 0));
`;

function churnPeakMiB(mode: "limit" | "default"): number {
  const module = pathToFileURL(resolve(import.meta.dirname, "../../dist/heap-growth.js")).href;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", CHURN, mode, module], { encoding: "utf8" });
  expect(child.status, child.stderr).toBe(0);
  return Number(child.stdout) / 2 ** 20;
}

describe("limitHeapGrowth", () => {
  it("keeps the old generation within 2× of what is alive, set after the process started", () => {
    const limited = churnPeakMiB("limit");
    // ~20 MiB alive plus up to 8 held batches (~15 MiB), let grow 2×, plus the young generation.
    expect(limited).toBeLessThan(200);
    // Where V8 would pick its largest growth itself, the limit is what made the difference.
    if (getHeapStatistics().heap_size_limit >= 2 * 2 ** 30) expect(churnPeakMiB("default")).toBeGreaterThan(limited * 1.4);
  });
});
