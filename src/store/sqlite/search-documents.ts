import { createHash } from "node:crypto";
import { AppError } from "../../errors.js";
import { embedderMismatch } from "../../search/embedder.js";
import { hybridSearch, type Similarity } from "../../search/hybrid.js";
import { querySides } from "../../search/scoring.js";
import { newGeneration, VECTOR_CACHE_BYTES, VectorCache, type VectorChanges, type VectorRow } from "../../search/vector-cache.js";
import { type SearchIndexRow, searchIndexFromRow } from "../rows-shared.js";
import type {
  DocumentSelector,
  SearchDocumentStore,
  StoredDocument,
} from "../search-document-store.js";
import type { SqliteContext } from "./context.js";
import { type SqlFragment, sqliteFilter } from "./search-filter.js";
import { searchUsageQueries } from "./search-usage.js";

/**
 * The search data plane on SQLite (docs/search.md "Storage"): FTS5 with porter stemming for the full-text side, and
 * for the semantic side an exact scan of the embeddings held in memory (src/search/vector-cache.ts), or, for a name
 * too large for that memory, of the BLOBs with sqlite-vec (`vec0` KNN unfiltered, `vec_distance_cosine` filtered).
 */

interface DocRow {
  rowid: number;
  id: string;
  content: string;
  metadata: string | null;
}

const blob = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
/** The built-in embedder's dimension: its vectors also go to the vec0 nearest-neighbour table. */
const KNN_DIMENSION = 128;

/** One full-text token per (index, name), indexed with each document so a MATCH stays inside its name. */
export function scopeToken(indexId: string, namespace: string): string {
  return `s${createHash("sha256").update(`${indexId}\0${namespace}`).digest("hex").slice(0, 24)}0`;
}

/**
 * Full-text matches whose score a query reads (best first). A semantic candidate beyond them counts as sharing no
 * term with the query: its full-text score, at most the last one read, is taken as 0 (docs/search.md "Scoring").
 * Reading 1,000 instead of 5,000 halves the cost of the full-text side at 100,000 documents.
 */
export const FULLTEXT_SCORED = 1000;
const toStored = (r: DocRow): StoredDocument => ({ id: r.id, contentJson: r.content, metadataJson: r.metadata });
const ftsMatch = (terms: string[]): string => terms.map((t) => `"${t.replace(/"/g, "")}"`).join(" OR ");

/** `cacheBytes`: memory for cached vectors (src/search/vector-cache.ts); 0 scans in the database (tests compare). */
export function searchDocumentQueries(ctx: SqliteContext, cacheBytes = VECTOR_CACHE_BYTES): SearchDocumentStore {
  const { db } = ctx;
  const bySlug = db.prepare("SELECT * FROM search_indexes WHERE slug = ? ORDER BY creation_time, id");
  const getState = db.prepare(
    "SELECT embedder, dimension, documents, generation FROM search_index_state WHERE index_id = ?",
  );
  const setGeneration = db.prepare("UPDATE search_index_state SET generation = ? WHERE index_id = ?");
  const vectorCount = db.prepare("SELECT COUNT(*) FROM search_vectors WHERE index_id = ? AND namespace = ?").pluck();
  const vectorRows = db
    .prepare("SELECT rowid, embedding FROM search_vectors WHERE index_id = ? AND namespace = ?")
    .raw();
  const cache = new VectorCache(cacheBytes);
  const insertState = db.prepare(
    "INSERT INTO search_index_state (index_id, embedder, dimension, documents) VALUES (?, ?, ?, 0)",
  );
  const setEmbedder = db.prepare("UPDATE search_index_state SET embedder = ?, dimension = ? WHERE index_id = ?");
  const addDocuments = db.prepare("UPDATE search_index_state SET documents = documents + ? WHERE index_id = ?");
  const allDocuments = db.prepare("SELECT COALESCE(SUM(documents), 0) FROM search_index_state").pluck();
  const findRowid = db.prepare("SELECT rowid FROM search_documents WHERE index_id = ? AND namespace = ? AND id = ?");
  const insertDoc = db.prepare(
    "INSERT INTO search_documents (index_id, namespace, id, content, metadata, text, scope) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const knnDelete = db.prepare("DELETE FROM search_vectors_knn128 WHERE rowid = ?");
  const knnInsert = db.prepare(
    "INSERT INTO search_vectors_knn128 (rowid, index_id, namespace, embedding) VALUES (?, ?, ?, ?)",
  );
  const knnScan = db.prepare(
    `SELECT rowid AS key, 1 - distance AS value FROM search_vectors_knn128
     WHERE embedding MATCH ? AND k = ? AND index_id = ? AND namespace = ?`,
  );
  const updateDoc = db.prepare("UPDATE search_documents SET content = ?, metadata = ?, text = ? WHERE rowid = ?");
  const upsertVector = db.prepare(
    "INSERT OR REPLACE INTO search_vectors (rowid, index_id, namespace, embedding) VALUES (?, ?, ?, ?)",
  );
  const getDoc = db.prepare(
    "SELECT rowid, id, content, metadata FROM search_documents WHERE index_id = ? AND namespace = ? AND id = ?",
  );
  const docsByRowids = db.prepare(
    "SELECT rowid, id, content, metadata FROM search_documents WHERE rowid IN (SELECT value FROM json_each(?))",
  );
  // The unfiltered scans are prepared once; a filtered one is prepared per query (its SQL depends on the filter).
  const semanticScan = db.prepare(
    `SELECT rowid AS key, 1 - vec_distance_cosine(embedding, ?) AS value FROM search_vectors
     WHERE index_id = ? AND namespace = ? ORDER BY value DESC LIMIT ?`,
  );
  // The scope token in the MATCH keeps the search inside FTS5 (no join); `rank` is bm25 on the text column.
  const fulltextScan = db.prepare(
    `SELECT rowid AS key, -rank AS value FROM search_documents_fts
     WHERE search_documents_fts MATCH ? ORDER BY rank LIMIT ?`,
  );
  const fulltextFilteredSql = (filter: string) =>
    `WITH m AS MATERIALIZED (SELECT rowid AS key, rank AS r FROM search_documents_fts WHERE search_documents_fts MATCH ?)
     SELECT m.key AS key, -m.r AS value FROM m JOIN search_documents d ON d.rowid = m.key
     WHERE ${filter} ORDER BY m.r LIMIT ?`;
  const semanticOf = db.prepare(
    `SELECT rowid AS key, 1 - vec_distance_cosine(embedding, ?) AS value FROM search_vectors
     WHERE rowid IN (SELECT value FROM json_each(?))`,
  );


  const state = (indexId: string) =>
    getState.get(indexId) as
      | { embedder: string; dimension: number; documents: number; generation: number }
      | undefined;

  /**
   * Inside a write, after its SQL: a new generation for the index, and this store's cached vectors of it brought in
   * step (docs/search.md "Vector cache"). A rollback leaves the database at the old generation: the entries then no
   * longer match it and reload.
   */
  function written(indexId: string, before: number | undefined, changes: VectorChanges): void {
    const after = newGeneration();
    setGeneration.run(after, indexId);
    cache.changed(indexId, before, after, changes);
  }

  /** The name's vectors in memory at the index's current generation; undefined when they do not fit. */
  function cachedVectors(indexId: string, namespace: string, current: { dimension: number; generation: number }) {
    const cached = cache.get(indexId, namespace, current.generation);
    if (cached) return cached;
    const count = vectorCount.get(indexId, namespace) as number;
    if (!cache.fits(count, current.dimension)) return undefined;
    const rows = vectorRows.iterate(indexId, namespace) as IterableIterator<VectorRow>;
    return cache.load(indexId, namespace, current.generation, current.dimension, count, rows);
  }


  /** Rowids of the selected documents (ids in any order; missing ids skipped). */
  function selectRowids(indexId: string, namespace: string, selector: DocumentSelector, limit?: number): number[] {
    const lim = limit === undefined ? "" : ` LIMIT ${Math.max(0, Math.floor(limit))}`;
    if ("ids" in selector) {
      return (
        db
          .prepare(
            `SELECT rowid FROM search_documents WHERE index_id = ? AND namespace = ? AND id IN (SELECT value FROM json_each(?))`,
          )
          .pluck()
          .all(indexId, namespace, JSON.stringify(selector.ids)) as number[]
      );
    }
    if ("prefix" in selector) {
      return db
        .prepare(
          `SELECT rowid FROM search_documents WHERE index_id = ? AND namespace = ? AND substr(id, 1, length(?)) = ? ORDER BY id${lim}`,
        )
        .pluck()
        .all(indexId, namespace, selector.prefix, selector.prefix) as number[];
    }
    const f = sqliteFilter(selector.filter);
    return db
      .prepare(`SELECT rowid FROM search_documents d WHERE index_id = ? AND namespace = ? AND ${f.sql} ORDER BY id${lim}`)
      .pluck()
      .all(indexId, namespace, ...f.params) as number[];
  }

  /** Rowids of the name's documents that pass a filter (the semantic side scores only those). */
  const filteredRowids = (indexId: string, namespace: string, f: SqlFragment) =>
    db
      .prepare(`SELECT rowid FROM search_documents d WHERE index_id = ? AND namespace = ? AND ${f.sql}`)
      .pluck()
      .all(indexId, namespace, ...f.params) as number[];

  function deleteRowids(indexId: string, namespace: string | undefined, rowids: number[], cleared = false): number {
    if (rowids.length === 0) return 0;
    const before = state(indexId)?.generation;
    const n = db
      .prepare("DELETE FROM search_documents WHERE rowid IN (SELECT value FROM json_each(?))")
      .run(JSON.stringify(rowids)).changes;
    addDocuments.run(-n, indexId);
    written(indexId, before, { ...(namespace === undefined ? {} : { namespace }), removed: rowids, cleared });
    return n;
  }

  return {
    ...searchUsageQueries(ctx),
    searchIndexListBySlug: async ({ slug }) => (bySlug.all(slug) as SearchIndexRow[]).map(searchIndexFromRow),

    searchDocUpsert: ({ indexId, namespace, docs, embedder, maxDocuments }) =>
      ctx.write(() => {
        const current = state(indexId);
        if (current && current.documents === 0) {
          // An empty index (never filled, or reset) takes whichever embedder fills it now.
          setEmbedder.run(embedder.name, embedder.dimension, indexId);
        } else if (current) {
          const mismatch = embedderMismatch(namespace, current, embedder);
          if (mismatch) throw mismatch;
        } else {
          insertState.run(indexId, embedder.name, embedder.dimension);
        }
        let added = 0;
        const scope = scopeToken(indexId, namespace);
        const vectors: [number, Float32Array][] = [];
        for (const doc of docs) {
          const existing = findRowid.get(indexId, namespace, doc.id) as { rowid: number } | undefined;
          let rowid: number;
          if (existing) {
            rowid = existing.rowid;
            updateDoc.run(doc.contentJson, doc.metadataJson, doc.text, rowid);
          } else {
            rowid = Number(
              insertDoc.run(indexId, namespace, doc.id, doc.contentJson, doc.metadataJson, doc.text, scope)
                .lastInsertRowid,
            );
            added++;
          }
          upsertVector.run(rowid, indexId, namespace, blob(doc.embedding));
          vectors.push([rowid, doc.embedding]);
          if (doc.embedding.length === KNN_DIMENSION) {
            knnDelete.run(BigInt(rowid));
            knnInsert.run(BigInt(rowid), indexId, namespace, blob(doc.embedding));
          }
        }
        const total = (current?.documents ?? 0) + added;
        if (maxDocuments >= 0 && added > 0 && total > maxDocuments) {
          throw new AppError(
            "invalid_input",
            `max_vector_count exceeded: the index would hold ${total} documents, its plan allows ${maxDocuments}`,
          );
        }
        if (added > 0) addDocuments.run(added, indexId);
        written(indexId, current?.generation, { namespace, set: vectors });
      }),

    searchDocQuery: async (q) => {
      const current = state(q.indexId);
      if (!current || current.documents === 0) return [];
      const mismatch = embedderMismatch(q.namespace, current, q.embedder);
      if (mismatch) throw mismatch;
      const f = q.filter ? sqliteFilter(q.filter) : undefined;
      const query = blob(q.embedding);
      const matrix = querySides(q).semantic ? cachedVectors(q.indexId, q.namespace, current) : undefined;
      // The primitives of the hybrid query (src/search/hybrid.ts), on this connection.
      return hybridSearch<StoredDocument>(q, {
        topSemantic: async (k) =>
          matrix
            ? matrix.nearest(q.embedding, k, f ? filteredRowids(q.indexId, q.namespace, f) : undefined)
            : ((f
                ? db
                    .prepare(
                      `SELECT v.rowid AS key, 1 - vec_distance_cosine(v.embedding, ?) AS value FROM search_vectors v
                       JOIN search_documents d ON d.rowid = v.rowid
                       WHERE v.index_id = ? AND v.namespace = ? AND ${f.sql} ORDER BY value DESC LIMIT ?`,
                    )
                    .all(query, q.indexId, q.namespace, ...f.params, k)
                : q.embedding.length === KNN_DIMENSION
                  ? knnScan.all(query, k, q.indexId, q.namespace)
                  : semanticScan.all(query, q.indexId, q.namespace, k)) as Similarity[]),
        topFulltext: async (k, semanticKeys) => {
          // Every match's score up to FULLTEXT_SCORED (bm25 is computed for all matches to sort them anyway): the
          // semantic candidates read theirs from here instead of a second MATCH per document.
          // When this name holds every document of the store (one index, one name: its cached vectors are as many
          // as all documents), the scope term selects nothing more and is left out: the same matches and scores
          // (the scope column weighs 0), about half the cost (docs/search.md "Storage").
          const match = ftsMatch(q.terms);
          const held = matrix ?? cache.get(q.indexId, q.namespace, current.generation);
          const alone = held !== undefined && held.size === (allDocuments.get() as number);
          const scoped = alone
            ? `text : (${match})`
            : `scope : "${scopeToken(q.indexId, q.namespace)}" AND (${match})`;
          const rows = (
            f
              ? db.prepare(fulltextFilteredSql(f.sql)).all(scoped, ...f.params, FULLTEXT_SCORED)
              : fulltextScan.all(scoped, FULLTEXT_SCORED)
          ) as Similarity[];
          const semantic = new Set(semanticKeys);
          return { top: rows.slice(0, k), of: rows.slice(k).filter((r) => semantic.has(r.key)) };
        },
        semanticOf: async (keys) =>
          matrix
            ? matrix.similarities(q.embedding, keys)
            : (semanticOf.all(query, JSON.stringify(keys)) as Similarity[]),
        documents: async (keys) => {
          const rows = docsByRowids.all(JSON.stringify(keys)) as DocRow[];
          return new Map(rows.map((r) => [r.rowid, toStored(r)]));
        },
      });
    },

    searchDocFetch: async ({ indexId, namespace, selector, limit }) => {
      if ("ids" in selector) {
        return selector.ids.map((id) => {
          const row = getDoc.get(indexId, namespace, id) as DocRow | undefined;
          return row ? toStored(row) : undefined;
        });
      }
      const rowids = selectRowids(indexId, namespace, selector, limit);
      const rows = new Map((docsByRowids.all(JSON.stringify(rowids)) as DocRow[]).map((r) => [r.rowid, r]));
      return rowids.map((k) => toStored(rows.get(k)!));
    },

    searchDocDelete: ({ indexId, namespace, selector }) =>
      ctx.write(() => deleteRowids(indexId, namespace, selectRowids(indexId, namespace, selector))),

    searchDocRange: async ({ indexId, namespace, after, limit, prefix }) => {
      const rows = db
        .prepare(
          `SELECT rowid, id, content, metadata FROM search_documents
           WHERE index_id = ? AND namespace = ? AND id > ? AND substr(id, 1, length(?)) = ? ORDER BY id LIMIT ?`,
        )
        .all(indexId, namespace, after ?? "", prefix ?? "", prefix ?? "", limit) as DocRow[];
      return rows.map(toStored);
    },

    searchDocReset: ({ indexId, namespace }) =>
      ctx.write(() => {
        const rowids = (
          namespace === undefined
            ? db.prepare("SELECT rowid FROM search_documents WHERE index_id = ?").pluck().all(indexId)
            : db
                .prepare("SELECT rowid FROM search_documents WHERE index_id = ? AND namespace = ?")
                .pluck()
                .all(indexId, namespace)
        ) as number[];
        deleteRowids(indexId, namespace, rowids, true);
      }),

    searchDocInfo: async ({ indexId }) => {
      const namespaces = (
        db
          .prepare(
            "SELECT namespace, COUNT(*) AS documents FROM search_documents WHERE index_id = ? GROUP BY namespace ORDER BY namespace",
          )
          .all(indexId) as { namespace: string; documents: number }[]
      ).map((r) => ({ namespace: r.namespace, documents: r.documents }));
      const bytes = (
        db
          .prepare(
            `SELECT COALESCE(SUM(length(content) + COALESCE(length(metadata), 0) + length(text)), 0)
               + (SELECT COALESCE(SUM(length(embedding)), 0) FROM search_vectors WHERE index_id = ?) AS n
             FROM search_documents WHERE index_id = ?`,
          )
          .get(indexId, indexId) as { n: number }
      ).n;
      const current = state(indexId);
      return {
        namespaces,
        bytes,
        ...(current ? { embedder: { name: current.embedder, dimension: current.dimension } } : {}),
      };
    },
  };
}
