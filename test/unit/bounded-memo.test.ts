import { describe, expect, it } from "vitest";
import { boundedMemo } from "../../src/domain/bounded-memo.js";

describe("boundedMemo", () => {
  it("computes each input once, undefined results included", () => {
    const calls: string[] = [];
    const memo = boundedMemo((s: string) => {
      calls.push(s);
      return s === "none" ? undefined : s.length;
    });
    expect([memo("abc"), memo("abc"), memo("none"), memo("none"), memo("x")]).toEqual([3, 3, undefined, undefined, 1]);
    expect(calls).toEqual(["abc", "none", "x"]);
  });

  it("keeps at most `kept` results, then starts over, and still answers right", () => {
    let calls = 0;
    const memo = boundedMemo((s: string) => {
      calls++;
      return s.toUpperCase();
    }, 3);
    for (const s of ["a", "b", "c"]) memo(s);
    expect(memo("a")).toBe("A");
    expect(calls).toBe(3);
    memo("d"); // the fourth input: the three kept are forgotten
    expect(memo("a")).toBe("A");
    expect(calls).toBe(5);
  });
});
