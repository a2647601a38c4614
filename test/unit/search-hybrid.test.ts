import { describe, expect, it } from "vitest";
import { hybridSearch, type Similarity } from "../../src/search/hybrid.js";

/**
 * The hybrid query written once for both stores (src/search/hybrid.ts): which primitive it asks for what. The
 * stores' own primitives are tested through it on both adapters (test/store/search-documents.test.ts); here it is
 * given a small table of similarities, so each rule shows alone.
 */
function table(p: { semantic: Record<number, number>; fulltext: Record<number, number>; gone?: number[] }) {
  const calls: string[] = [];
  const best = (side: Record<number, number>, k: number): Similarity[] =>
    Object.entries(side)
      .map(([key, value]) => ({ key: Number(key), value }))
      .sort((a, b) => b.value - a.value)
      .slice(0, k);
  return {
    calls,
    store: {
      topSemantic: async (k: number) => {
        calls.push(`topSemantic ${k}`);
        return best(p.semantic, k);
      },
      topFulltext: async (k: number, keys: readonly number[]) => {
        calls.push(`topFulltext ${k} [${keys.join(",")}]`);
        const of = keys.filter((key) => p.fulltext[key] !== undefined).map((key) => ({ key, value: p.fulltext[key]! }));
        return { top: best(p.fulltext, k), of };
      },
      semanticOf: async (keys: readonly number[]) => {
        calls.push(`semanticOf [${keys.join(",")}]`);
        return keys.map((key) => ({ key, value: p.semantic[key] ?? 0 }));
      },
      documents: async (keys: readonly number[]) =>
        new Map(keys.filter((k) => !p.gone?.includes(k)).map((k) => [k, { id: `d${k}` }])),
    },
  };
}

describe("hybrid search over a store's primitives", () => {
  it("merges both sides' candidates, asks the other side's score only for those it lacks, and ranks", async () => {
    const t = table({ semantic: { 1: 0.8, 2: 0.4 }, fulltext: { 2: 10, 3: 5 } });
    const hits = await hybridSearch({ terms: ["x"], semanticWeight: 0.5, topK: 10 }, t.store);
    expect(t.calls).toEqual(["topSemantic 100", "topFulltext 100 [1,2]", "semanticOf [3]"]);
    expect(hits.map((h) => h.id)).toEqual(["d2", "d1", "d3"]);
    expect(hits[0]!.score).toBeCloseTo(0.5 * 0.5 + 0.5 * 1, 10);
    expect(hits[1]!.score).toBeCloseTo(0.5, 10);
    expect(hits[2]!.score).toBeCloseTo(0.25, 10);
  });

  it("searches only the sides the weight and terms name", async () => {
    const semanticOnly = table({ semantic: { 1: 0.9 }, fulltext: { 2: 1 } });
    await hybridSearch({ terms: ["x"], semanticWeight: 1, topK: 5 }, semanticOnly.store);
    expect(semanticOnly.calls).toEqual(["topSemantic 100"]);
    const fulltextOnly = table({ semantic: { 1: 0.9 }, fulltext: { 2: 1 } });
    const hits = await hybridSearch({ terms: ["x"], semanticWeight: 0, topK: 5 }, fulltextOnly.store);
    expect(fulltextOnly.calls).toEqual(["topFulltext 100 []"]);
    expect(hits).toEqual([{ id: "d2", score: 1 }]);
  });

  it("leaves out a ranked document that is gone, and keeps at most topK", async () => {
    const t = table({ semantic: { 1: 0.9, 2: 0.8, 3: 0.7 }, fulltext: {}, gone: [2] });
    const hits = await hybridSearch({ terms: [], semanticWeight: 0.75, topK: 2 }, t.store);
    expect(hits.map((h) => h.id)).toEqual(["d1"]);
  });
});
