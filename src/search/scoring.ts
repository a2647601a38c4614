/**
 * Hybrid scoring (docs/search.md "Scoring"): `w · semantic + (1 − w) · full-text`, each side divided by its best
 * value among the query's candidates so both lie in [0, 1]. A candidate is the union of each side's best hits.
 */
export interface Candidate {
  /** Store-local key of the document (a rowid); only compared, never shown. */
  key: number;
  /** Cosine similarity in [-1, 1]; negative counts as 0. */
  semantic: number;
  /** Full-text relevance (BM25-like, ≥ 0); 0 when the document shares no term with the query. */
  fulltext: number;
}

export interface Scored {
  key: number;
  score: number;
}

/** How many hits each side contributes before the merge: enough that the merged top K is each side's best. */
export function candidatesPerSide(topK: number): number {
  return Math.max(100, topK * 4);
}

/**
 * The sides a query ranks by: the semantic side unless its weight is 0; the full-text side unless the weight is 1 or
 * the query has no terms. Each store searches only the sides this names.
 */
export function querySides(q: { semanticWeight: number; terms: readonly string[] }): {
  semantic: boolean;
  fulltext: boolean;
} {
  return { semantic: q.semanticWeight > 0, fulltext: q.semanticWeight < 1 && q.terms.length > 0 };
}

/** A query's candidates by document key, created on first mention with both similarities 0. */
export class Candidates {
  private readonly byKey = new Map<number, Candidate>();

  of(key: number): Candidate {
    let c = this.byKey.get(key);
    if (!c) this.byKey.set(key, (c = { key, semantic: 0, fulltext: 0 }));
    return c;
  }

  all(): Candidate[] {
    return [...this.byKey.values()];
  }
}

/**
 * Best first, at most `topK`. With `w = 0` only documents that share a term with the query are returned (the
 * relevance floor of docs/search.md); a zero total score is never returned.
 */
export function rankHybrid(candidates: Candidate[], semanticWeight: number, topK: number): Scored[] {
  let maxSemantic = 0;
  let maxFulltext = 0;
  for (const c of candidates) {
    if (c.semantic > maxSemantic) maxSemantic = c.semantic;
    if (c.fulltext > maxFulltext) maxFulltext = c.fulltext;
  }
  const scored: Scored[] = [];
  for (const c of candidates) {
    const s = maxSemantic > 0 ? Math.max(0, c.semantic) / maxSemantic : 0;
    const f = maxFulltext > 0 ? c.fulltext / maxFulltext : 0;
    const score = semanticWeight * s + (1 - semanticWeight) * f;
    if (score > 0) scored.push({ key: c.key, score: Math.min(1, score) });
  }
  scored.sort((a, b) => b.score - a.score || a.key - b.key);
  return scored.slice(0, topK);
}
