import { describe, expect, it } from "vitest";
import { DlqIdMinter, IDS_PER_MS } from "../../src/domain/dlq-id.js";

const parse = (id: string) => {
  const [ms, seq] = id.split("-");
  return { ms: Number(ms), node: BigInt(seq!) / BigInt(IDS_PER_MS), n: BigInt(seq!) % BigInt(IDS_PER_MS) };
};

describe("DLQ ids", () => {
  it("keep the <ms>-<seq> form and carry the node number in seq", () => {
    const id = new DlqIdMinter(7).next(1_725_323_658_779);
    expect(id).toMatch(/^1725323658779-\d+$/);
    expect(parse(id)).toEqual({ ms: 1_725_323_658_779, node: 7n, n: 0n });
  });

  it("two nodes minting in the same milliseconds never collide", () => {
    const a = new DlqIdMinter(1);
    const b = new DlqIdMinter(2);
    const ids = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      ids.add(a.next(1000 + (i % 3)));
      ids.add(b.next(1000 + (i % 3)));
    }
    expect(ids.size).toBe(20_000);
  });

  it("stay unique in one process when the clock stands still, goes back, or a millisecond overflows", () => {
    const m = new DlqIdMinter(3);
    const ids = new Set<string>();
    const times = [5000, 5000, 4000, 3000, 5000, 5001, 5001, 4999];
    for (const t of times) ids.add(m.next(t));
    expect(ids.size).toBe(times.length);
    // A standing clock past 2^20 ids moves on to the next millisecond instead of reusing a seq.
    const still = new DlqIdMinter(4);
    let last = "";
    for (let i = 0; i <= IDS_PER_MS; i++) last = still.next(9000);
    expect(parse(last)).toEqual({ ms: 9001, node: 4n, n: 0n });
  });

  it("refuses a node number that is not a non-negative integer", () => {
    expect(() => new DlqIdMinter(-1)).toThrow(/node number/);
    expect(() => new DlqIdMinter(1.5)).toThrow(/node number/);
  });
});
