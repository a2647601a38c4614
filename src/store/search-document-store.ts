import type { SearchIndex } from "../domain/search.js";
import type { FilterNode } from "../search/filter.js";

/**
 * Storage of the search data plane (docs/search.md): the documents of every search index, their full-text index and
 * embeddings, and per-index usage counters. Params and results are structured-cloneable (the store may run in its
 * own thread); vectors travel as Float32Array. `namespace` is the index name inside an endpoint (`{i}` in the path).
 */
export interface StoredDocument {
  id: string;
  contentJson: string;
  metadataJson: string | null;
}

export interface DocumentWrite extends StoredDocument {
  text: string;
  embedding: Float32Array;
}

/** Which documents a fetch or delete means: ids, an id prefix, or a filter. */
export type DocumentSelector = { ids: string[] } | { prefix: string } | { filter: FilterNode };

export interface SearchHit extends StoredDocument {
  score: number;
}

export interface SearchQuery {
  indexId: string;
  namespace: string;
  /** Full-text terms, OR'ed; empty skips the full-text side. */
  terms: string[];
  embedding: Float32Array;
  embedder: { name: string; dimension: number };
  semanticWeight: number;
  topK: number;
  filter?: FilterNode;
}

/** `bandwidth` counts bytes (request and response bodies); the others count operations. */
export type SearchUsageKind = "update" | "query" | "rerank" | "bandwidth";

export interface SearchNamespaceInfo {
  namespace: string;
  documents: number;
}

export interface SearchDocumentStore {
  /** The indexes whose endpoint ends with `/search/<slug>` (one, unless two random slugs collided). */
  searchIndexListBySlug(p: { slug: string }): Promise<SearchIndex[]>;
  /**
   * Inserts or replaces documents in one durable transaction. Refuses (AppError 400) when the index was built by
   * another embedder or dimension, or when the index would hold more than `maxDocuments` (-1: no limit).
   */
  searchDocUpsert(p: {
    indexId: string;
    namespace: string;
    docs: DocumentWrite[];
    embedder: { name: string; dimension: number };
    maxDocuments: number;
  }): Promise<void>;
  /** Best first; filtering happens before ranking. Refuses (400) a query embedded by another embedder. */
  searchDocQuery(p: SearchQuery): Promise<SearchHit[]>;
  /** For `ids`: aligned with them, undefined for a missing id. Otherwise: ordered by id, at most `limit`. */
  searchDocFetch(p: {
    indexId: string;
    namespace: string;
    selector: DocumentSelector;
    limit: number;
  }): Promise<(StoredDocument | undefined)[]>;
  searchDocDelete(p: { indexId: string; namespace: string; selector: DocumentSelector }): Promise<number>;
  /** Documents with id > `after` (and starting with `prefix`), ordered by id. */
  searchDocRange(p: {
    indexId: string;
    namespace: string;
    after: string | undefined;
    limit: number;
    prefix?: string;
  }): Promise<StoredDocument[]>;
  /** Deletes the namespace's documents, or every document of the index when `namespace` is undefined. */
  searchDocReset(p: { indexId: string; namespace?: string }): Promise<void>;
  searchDocInfo(p: { indexId: string }): Promise<{
    namespaces: SearchNamespaceInfo[];
    bytes: number;
    embedder?: { name: string; dimension: number };
  }>;
  /**
   * Atomically adds `n` operations of `kind` to the index's per-minute counters unless the sum since `since` would
   * pass `limit` (-1: no limit). Returns whether they were counted and the sum afterwards (before, if refused).
   */
  searchUsageConsume(p: {
    indexId: string;
    kind: SearchUsageKind;
    n: number;
    now: number;
    since: number;
    limit: number;
  }): Promise<{ allowed: boolean; used: number }>;
  /** Operations of `kind` counted since `since` (unix ms). */
  searchUsageSum(p: { indexId: string; kind: SearchUsageKind; since: number }): Promise<number>;
  /** Operations of every kind but `bandwidth` per bucket of `stepMs` from `from` (`count` buckets, oldest first). */
  searchUsageSeries(p: { indexId: string; from: number; stepMs: number; count: number }): Promise<number[]>;
}
