import { describe, expect, it } from "vitest";
import { hashEmbed } from "../../src/search/embedder.js";
import { VectorCache, type VectorRow } from "../../src/search/vector-cache.js";

/** The in-memory vectors of the semantic side (src/search/vector-cache.ts): exact cosines, generations, budget. */

const bytes = (v: Float32Array): Uint8Array => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/** Brute force over a map of vectors: the reference the cache must agree with. */
function exact(vectors: Map<number, Float32Array>, query: Float32Array, k: number, keys?: number[]) {
  return [...vectors]
    .filter(([key]) => !keys || keys.includes(key))
    .map(([key, v]) => ({ key, value: cosine(query, v) }))
    .sort((a, b) => b.value - a.value || a.key - b.key)
    .slice(0, k);
}

/** Same values in order; keys may differ only between (near) ties. */
function expectNearest(got: { key: number; value: number }[], want: { key: number; value: number }[], vectors: Map<number, Float32Array>, query: Float32Array) {
  expect(got.length).toBe(want.length);
  for (const [i, s] of got.entries()) {
    expect(s.value).toBeCloseTo(want[i]!.value, 5);
    expect(s.value).toBeCloseTo(cosine(query, vectors.get(s.key)!), 5);
  }
  expect(new Set(got.map((s) => s.key)).size).toBe(got.length);
}

const texts = Array.from({ length: 300 }, (_, i) => `document ${i} about ${["rivers", "mountains", "cities"][i % 3]} ${i * 7}`);

function loaded(cache: VectorCache, vectors: Map<number, Float32Array>, generation = 1) {
  const rows = [...vectors].map(([k, v]): VectorRow => [k, bytes(v)]);
  return cache.load("i1", "ns", generation, 128, rows.length, rows);
}

describe("vector cache", () => {
  const vectors = new Map(texts.map((t, i) => [i + 1, hashEmbed(t)]));

  it("returns the exact nearest vectors, all of them or among given keys", () => {
    const matrix = loaded(new VectorCache(1e9), vectors);
    for (const q of ["rivers 14", "mountain", "document 299 about cities", "zzz"]) {
      const query = hashEmbed(q);
      expectNearest(matrix.nearest(query, 10), exact(vectors, query, 10), vectors, query);
      const keys = [5, 6, 7, 100, 200, 9999];
      const filtered = matrix.nearest(query, 3, keys);
      expectNearest(filtered, exact(vectors, query, 3, keys), vectors, query);
      for (const s of filtered) expect(keys).toContain(s.key);
      const sims = matrix.similarities(query, [3, 4, 12345]);
      expect(sims.map((s) => s.key)).toEqual([3, 4]);
      expect(sims[0]!.value).toBeCloseTo(cosine(query, vectors.get(3)!), 5);
    }
  });

  it("scores vectors that are not unit length as cosines, an empty one as 0", () => {
    const cache = new VectorCache(1e9);
    const a = new Float32Array(128).fill(0);
    a[0] = 3;
    const rows: VectorRow[] = [
      [1, bytes(a)],
      [2, bytes(new Float32Array(128))],
    ];
    const matrix = cache.load("i1", "ns", 1, 128, 2, rows);
    const q = new Float32Array(128);
    q[0] = 0.5;
    expect(matrix.nearest(q, 5)).toEqual([
      { key: 1, value: 1 },
      { key: 2, value: 0 },
    ]);
  });

  it("takes a write's changes when it was current, and grows", () => {
    const cache = new VectorCache(1e9);
    const mine = new Map(vectors);
    loaded(cache, mine, 1);
    // 500 more (past the initial capacity), one replaced, two removed.
    const added = Array.from({ length: 500 }, (_, i): [number, Float32Array] => [1000 + i, hashEmbed(`extra ${i} lakes`)]);
    const replaced: [number, Float32Array] = [1, hashEmbed("lakes and lakes")];
    cache.changed("i1", 1, 2, { namespace: "ns", set: [...added, replaced], removed: [2, 3] });
    for (const [k, v] of [...added, replaced]) mine.set(k, v);
    mine.delete(2);
    mine.delete(3);
    const matrix = cache.get("i1", "ns", 2)!;
    expect(matrix.size).toBe(mine.size);
    const query = hashEmbed("lakes");
    expectNearest(matrix.nearest(query, 20), exact(mine, query, 20), mine, query);
    expect(matrix.similarities(query, [2, 3])).toEqual([]);
    // A write to another name of the index keeps this one current.
    cache.changed("i1", 2, 3, { namespace: "other", set: [[1, hashEmbed("x")]] });
    expect(cache.get("i1", "ns", 3)).toBe(matrix);
  });

  it("drops an entry that is stale: another generation, a write it missed, a reset", () => {
    const cache = new VectorCache(1e9);
    loaded(cache, vectors, 1);
    expect(cache.get("i1", "ns", 2)).toBeUndefined(); // written elsewhere (another node, a rollback)
    expect(cache.get("i1", "ns", 1)).toBeUndefined(); // and gone
    loaded(cache, vectors, 1);
    cache.changed("i1", 7, 8, { namespace: "ns", removed: [1] }); // a write this entry did not start from
    expect(cache.get("i1", "ns", 8)).toBeUndefined();
    loaded(cache, vectors, 1);
    cache.changed("i1", 1, 2, { namespace: "ns", removed: [1], cleared: true });
    expect(cache.get("i1", "ns", 2)).toBeUndefined();
    loaded(cache, vectors, 1);
    cache.changed("i1", 1, 2, { removed: [] }); // the whole index reset
    expect(cache.get("i1", "ns", 2)).toBeUndefined();
    loaded(cache, vectors, 1);
    cache.changed("i1", 1, 2, { namespace: "ns", set: [[1, new Float32Array(64)]] }); // another dimension
    expect(cache.get("i1", "ns", 2)).toBeUndefined();
  });

  it("keeps within its budget: too large is not cached, the least recently used goes first", () => {
    const perEntry = 300 * (128 + 3) * 4;
    expect(new VectorCache(perEntry - 1).fits(300, 128)).toBe(false);
    expect(new VectorCache(perEntry).fits(300, 128)).toBe(true);
    const cache = new VectorCache(perEntry * 2);
    const rows = [...vectors].map(([k, v]): VectorRow => [k, bytes(v)]);
    for (const ns of ["a", "b", "c"]) {
      cache.load("i1", ns, 1, 128, rows.length, rows);
      if (ns === "b") expect(cache.get("i1", "a", 1)).toBeDefined(); // a is now more recent than b
    }
    expect(cache.get("i1", "b", 1)).toBeUndefined();
    expect(cache.get("i1", "a", 1)).toBeDefined();
    expect(cache.get("i1", "c", 1)).toBeDefined();
  });
});
