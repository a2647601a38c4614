import { Candidates, candidatesPerSide, querySides, rankHybrid } from "./scoring.js";

/**
 * The hybrid query (docs/search.md "Scoring"), written once for both stores: which candidates each side contributes,
 * which scores are read for the other side's candidates, and the ranking. A store supplies only its primitives,
 * each already scoped to the query's index, name and filter (src/store/sqlite/search-documents.ts,
 * src/store/postgres/search-documents.ts).
 */

/** A document's similarity on one side, by its store-local key (a rowid or sequence number). */
export interface Similarity {
  key: number;
  value: number;
}

export interface HybridPrimitives<D> {
  /** The `k` documents most similar to the query's embedding (cosine), best first. */
  topSemantic(k: number): Promise<readonly Similarity[]>;
  /**
   * `top`: the `k` best full-text matches, best first. `of`: the full-text scores of `keys` (the semantic
   * candidates); a key left out counts as sharing no term with the query (a store may bound how far it looks:
   * docs/search.md "Scoring").
   */
  topFulltext(k: number, keys: readonly number[]): Promise<{ top: readonly Similarity[]; of: readonly Similarity[] }>;
  /** The semantic similarity of `keys` (full-text candidates the semantic side did not return). */
  semanticOf(keys: readonly number[]): Promise<readonly Similarity[]>;
  /** The documents of `keys`; a key whose document is gone meanwhile is left out. */
  documents(keys: readonly number[]): Promise<ReadonlyMap<number, D>>;
}

export interface HybridQuery {
  /** Full-text terms, OR'ed; empty skips the full-text side. */
  terms: readonly string[];
  semanticWeight: number;
  topK: number;
}

/** Best first, at most `topK`, each document with its score in (0, 1]. */
export async function hybridSearch<D extends object>(
  q: HybridQuery,
  store: HybridPrimitives<D>,
): Promise<(D & { score: number })[]> {
  const perSide = candidatesPerSide(q.topK);
  const sides = querySides(q);
  const found = new Candidates();
  const semanticKeys: number[] = [];
  const fulltextKeys: number[] = [];
  if (sides.semantic) {
    for (const s of await store.topSemantic(perSide)) {
      found.of(s.key).semantic = s.value;
      semanticKeys.push(s.key);
    }
  }
  if (sides.fulltext) {
    const { top, of } = await store.topFulltext(perSide, semanticKeys);
    for (const s of top) {
      found.of(s.key).fulltext = s.value;
      fulltextKeys.push(s.key);
    }
    for (const s of of) found.of(s.key).fulltext = s.value;
  }
  // The semantic side's score for the full-text hits it did not return.
  if (sides.semantic && fulltextKeys.length > 0) {
    const semantic = new Set(semanticKeys);
    const missing = fulltextKeys.filter((k) => !semantic.has(k));
    if (missing.length > 0) for (const s of await store.semanticOf(missing)) found.of(s.key).semantic = s.value;
  }
  const ranked = rankHybrid(found.all(), q.semanticWeight, q.topK);
  const documents = await store.documents(ranked.map((r) => r.key));
  const hits: (D & { score: number })[] = [];
  for (const r of ranked) {
    const document = documents.get(r.key);
    if (document) hits.push({ ...document, score: r.score });
  }
  return hits;
}
