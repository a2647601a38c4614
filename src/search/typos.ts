import { searchableText } from "./documents.js";

/**
 * Typo tolerance of a search query (docs/search.md "Typo tolerance"). The built-in embedder's trigrams alone lose a
 * misspelt word among look-alike documents, and the full-text side does not match it at all. So a query word found
 * in none of the best documents of a first pass, and within a few edits of a word they do hold, is corrected to that
 * word: the full-text side searches both, and the semantic side embeds the corrected query. The vocabulary is the
 * first pass's documents, so both stores correct alike and no index-wide word list is kept.
 */

/** Documents of the first pass whose words make the vocabulary (and the pass's topK when the query asks fewer). */
export const TYPO_POOL = 20;

/** Edits a word of this length may be corrected by: none up to 4 letters, 1 up to 8, 2 beyond (as Lucene's AUTO). */
export function editBudget(word: string): number {
  return word.length <= 4 ? 0 : word.length <= 8 ? 1 : 2;
}

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions) of `a` and `b`, or `max + 1` as soon
 * as it must exceed `max`. Two rows of state; no recursion.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased words of documents' content, each with the number of documents holding it. */
export function vocabularyOf(contents: string[]): Map<string, number> {
  const vocabulary = new Map<string, number>();
  for (const json of contents) {
    let text: string;
    try {
      text = searchableText(JSON.parse(json));
    } catch {
      continue;
    }
    for (const word of new Set(text.toLowerCase().match(WORD) ?? [])) vocabulary.set(word, (vocabulary.get(word) ?? 0) + 1);
  }
  return vocabulary;
}

/**
 * Corrections of the query's `terms` (lower-cased words) that `vocabulary` lacks: each to the vocabulary word fewest
 * edits away within its budget, the one more documents hold on a tie. Empty when nothing needs correcting.
 */
export function corrections(terms: readonly string[], vocabulary: ReadonlyMap<string, number>): Map<string, string> {
  const out = new Map<string, string>();
  for (const term of terms) {
    const budget = editBudget(term);
    if (budget === 0 || vocabulary.has(term)) continue;
    let best: { word: string; distance: number; documents: number } | undefined;
    for (const [word, documents] of vocabulary) {
      if (terms.includes(word)) continue;
      const distance = editDistance(term, word, budget);
      if (distance > budget) continue;
      if (!best || distance < best.distance || (distance === best.distance && documents > best.documents)) {
        best = { word, distance, documents };
      }
    }
    if (best) out.set(term, best.word);
  }
  return out;
}

/** The query with each corrected word replaced, for the semantic side. */
export function correctedQuery(query: string, fixes: ReadonlyMap<string, string>): string {
  return query.replace(WORD, (word) => fixes.get(word.toLowerCase()) ?? word);
}
