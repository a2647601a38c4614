import type { Scored } from "../search/scoring.js";
import type { SearchHit, StoredDocument } from "./search-document-store.js";

/**
 * The ranked candidates as hits, best first, from their documents read by key in one statement. A candidate whose
 * document is no longer there (deleted between scoring and reading) is left out.
 */
export function hitsInRankOrder(ranked: readonly Scored[], documents: ReadonlyMap<number, StoredDocument>): SearchHit[] {
  const hits: SearchHit[] = [];
  for (const r of ranked) {
    const document = documents.get(r.key);
    if (document) hits.push({ ...document, score: r.score });
  }
  return hits;
}
