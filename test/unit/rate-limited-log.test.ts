import { describe, expect, it } from "vitest";
import { RateLimitedLog } from "../../src/logger.js";

/** src/logger.ts RateLimitedLog: the per-destination bound of the failure lines (docs/operations.md, "Logs"). */
function recorder() {
  const lines: { fields: Record<string, unknown>; msg: string }[] = [];
  const log = { info: (fields: Record<string, unknown>, msg: string) => void lines.push({ fields, msg }) };
  return { lines, log: log as unknown as ConstructorParameters<typeof RateLimitedLog>[0] };
}

describe("RateLimitedLog", () => {
  it("logs perWindow lines per key and window, then counts; the key's next window's first line says how many", () => {
    const { lines, log } = recorder();
    const failures = new RateLimitedLog(log, { perWindow: 2, windowMs: 1000, maxKeys: 10 });
    for (let i = 0; i < 5; i++) failures.info("a:1", 100 + i, { i }, "x");
    failures.info("b:1", 150, { i: 99 }, "x");
    expect(lines.map((l) => l.fields)).toEqual([{ i: 0 }, { i: 1 }, { i: 99 }]);
    failures.info("a:1", 1100, { i: 5 }, "x");
    failures.info("a:1", 1101, { i: 6 }, "x");
    expect(lines.slice(3).map((l) => l.fields)).toEqual([{ i: 5, suppressed: 3 }, { i: 6 }]);
  });

  it("remembers at most maxKeys keys, forgetting the oldest window first", () => {
    const { lines, log } = recorder();
    const failures = new RateLimitedLog(log, { perWindow: 1, windowMs: 1000, maxKeys: 2 });
    failures.info("a", 0, {}, "x");
    failures.info("b", 1, {}, "x");
    failures.info("c", 2, {}, "x"); // forgets a
    failures.info("a", 3, {}, "x"); // a new window for a, so logged; forgets b
    failures.info("c", 4, {}, "x"); // c is still remembered: counted
    expect(lines).toHaveLength(4);
  });
});
