import { AppError } from "../errors.js";

/**
 * Embeddings behind one interface (docs/search.md "Embeddings"). An index remembers the `name` of the embedder that
 * built it and the dimension of its vectors, and refuses documents or queries from another.
 */
export interface Embedder {
  /** Stable identity stored with the index, e.g. `ferry-hash-v1` or `openai:<model>`. */
  readonly name: string;
  /** One unit-length vector per text, in order, all of one dimension. Throws an AppError (503) when it is down. */
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** Dimension of the built-in embedder: the cost of the exact vector scan grows with it (bench/scenarios/search.ts). */
export const BUILTIN_DIMENSION = 128;
export const BUILTIN_NAME = "ferry-hash-v1";

/** Weights of the two feature families: whole words carry meaning, character trigrams carry typo tolerance. */
const WORD_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.5;

/** 32-bit FNV-1a over UTF-16 code units from `start` to `end` of `s`, seeded so words and trigrams differ. */
function fnv1a(s: string, start: number, end: number, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = start; i < end; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * The built-in embedder: deterministic and model-free. Each lower-cased word and each character trigram of
 * `#word#` is hashed to a signed bucket (the feature-hashing trick); the sum is L2-normalised. It is lexical, not
 * semantic: it knows nothing of synonyms, but a misspelt word still shares most trigrams with the right one.
 */
export function hashEmbed(text: string, dimension = BUILTIN_DIMENSION): Float32Array {
  const v = new Float32Array(dimension);
  const lower = text.toLowerCase();
  for (const m of lower.matchAll(WORD)) {
    const word = `#${m[0]}#`;
    const wh = fnv1a(word, 0, word.length, 0);
    v[wh % dimension]! += wh & 0x80000000 ? -WORD_WEIGHT : WORD_WEIGHT;
    for (let i = 0; i + 3 <= word.length; i++) {
      const th = fnv1a(word, i, i + 3, 0x9e3779b9);
      v[th % dimension]! += th & 0x80000000 ? -TRIGRAM_WEIGHT : TRIGRAM_WEIGHT;
    }
  }
  let norm = 0;
  for (let i = 0; i < dimension; i++) norm += v[i]! * v[i]!;
  if (norm > 0) {
    const inv = 1 / Math.sqrt(norm);
    for (let i = 0; i < dimension; i++) v[i]! *= inv;
  }
  return v;
}

export const builtinEmbedder: Embedder = {
  name: BUILTIN_NAME,
  embed: async (texts) => texts.map((t) => hashEmbed(t)),
};

/** Cosine similarity of two unit vectors (their dot product). */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!;
  return s;
}

/** The 400 of a document or query embedded otherwise than the index was built; undefined when they agree. */
export function embedderMismatch(
  indexName: string,
  stored: { embedder: string; dimension: number },
  wanted: { name: string; dimension: number },
): AppError | undefined {
  if (stored.embedder === wanted.name && stored.dimension === wanted.dimension) return undefined;
  return new AppError(
    "invalid_input",
    `invalid embedder: index ${indexName} was built by ${stored.embedder} (dimension ${stored.dimension}) and this server embeds with ${wanted.name} (dimension ${wanted.dimension}); delete its documents (reset every index name of the endpoint) or configure the same embedder`,
  );
}
