import { describe, expect, it } from "vitest";
import { dot, hashEmbed } from "../../src/search/embedder.js";
import { Candidates, querySides, rankHybrid } from "../../src/search/scoring.js";

/** The built-in lexical embedder and the hybrid score (docs/search.md "Embeddings", "Scoring"). */
describe("built-in embedder", () => {
  it("is deterministic and unit length", () => {
    const a = hashEmbed("The quick brown fox");
    expect(hashEmbed("The quick brown fox")).toEqual(a);
    expect(dot(a, a)).toBeCloseTo(1, 5);
    expect(a.length).toBe(128);
    expect(dot(hashEmbed(""), hashEmbed(""))).toBe(0);
  });

  it("ignores case and punctuation", () => {
    expect(hashEmbed("Quick, BROWN fox!")).toEqual(hashEmbed("quick brown fox"));
  });

  it("keeps a misspelt word closer to its right spelling than to other words", () => {
    const right = hashEmbed("telescope");
    const typo = hashEmbed("telescpe");
    expect(dot(typo, right)).toBeGreaterThan(0.4);
    for (const other of ["microscope", "chocolate", "submarine", "orchestra"]) {
      expect(dot(typo, right)).toBeGreaterThan(dot(typo, hashEmbed(other)));
    }
  });
});

describe("hybrid ranking", () => {
  it("mixes both sides by the semantic weight after normalising each to its best value", () => {
    const candidates = [
      { key: 1, semantic: 0.8, fulltext: 0 },
      { key: 2, semantic: 0.4, fulltext: 10 },
    ];
    expect(rankHybrid(candidates, 1, 5)).toEqual([
      { key: 1, score: 1 },
      { key: 2, score: 0.5 },
    ]);
    expect(rankHybrid(candidates, 0, 5)).toEqual([{ key: 2, score: 1 }]);
    const mixed = rankHybrid(candidates, 0.75, 5);
    expect(mixed.map((s) => s.key)).toEqual([1, 2]);
    expect(mixed[0]!.score).toBeCloseTo(0.75, 10);
    expect(mixed[1]!.score).toBeCloseTo(0.75 * 0.5 + 0.25, 10);
    expect(rankHybrid(candidates, 0.25, 5).map((s) => s.key)).toEqual([2, 1]);
  });

  it("keeps topK, best first, never a zero score", () => {
    const candidates = Array.from({ length: 10 }, (_, i) => ({ key: i, semantic: i / 10, fulltext: 0 }));
    const top = rankHybrid(candidates, 1, 3);
    expect(top.map((s) => s.key)).toEqual([9, 8, 7]);
    expect(rankHybrid(candidates, 1, 100).some((s) => s.key === 0)).toBe(false);
  });
});

describe("query sides and candidates", () => {
  it("searches the semantic side unless its weight is 0, the full-text side unless it is 1 or there are no terms", () => {
    expect(querySides({ semanticWeight: 0.75, terms: ["a"] })).toEqual({ semantic: true, fulltext: true });
    expect(querySides({ semanticWeight: 0, terms: ["a"] })).toEqual({ semantic: false, fulltext: true });
    expect(querySides({ semanticWeight: 1, terms: ["a"] })).toEqual({ semantic: true, fulltext: false });
    expect(querySides({ semanticWeight: 0.5, terms: [] })).toEqual({ semantic: true, fulltext: false });
  });

  it("keeps one candidate per key, both sides starting at 0", () => {
    const found = new Candidates();
    found.of(3).semantic = 0.5;
    found.of(3).fulltext = 2;
    found.of(7).fulltext = 1;
    expect(found.all()).toEqual([
      { key: 3, semantic: 0.5, fulltext: 2 },
      { key: 7, semantic: 0, fulltext: 1 },
    ]);
  });
});
