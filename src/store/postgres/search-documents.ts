import { AppError } from "../../errors.js";
import { embedderMismatch } from "../../search/embedder.js";
import { hybridSearch } from "../../search/hybrid.js";
import { querySides } from "../../search/scoring.js";
import {
  newGeneration,
  VECTOR_CACHE_BYTES,
  VectorCache,
  type VectorChanges,
  type VectorRow,
} from "../../search/vector-cache.js";
import { type SearchIndexRow, searchIndexFromRow } from "../rows-shared.js";
import type { DocumentSelector, SearchDocumentStore, StoredDocument } from "../search-document-store.js";
import type { PgContext, Tx } from "./context.js";
import { Params } from "./filters.js";
import { postgresFilter } from "./search-filter.js";
import { arrayRows } from "./rows.js";

/** An upsert's documents as parallel arrays (arrayRows), from `$3`. */
const DOCUMENT_COLUMNS = [
  ["id", "text"],
  ["content", "jsonb"],
  ["metadata", "jsonb"],
  ["text", "text"],
  ["embedding", "bytea"],
] as const;

/**
 * The search data plane on PostgreSQL (docs/search.md "Storage"): a tsvector with a GIN index for the full-text side
 * (ts_rank, english configuration), embeddings scored exactly in this process (no pgvector on Debian 12's PG 15),
 * from the vectors each node keeps in memory until a write through any node changes the index's generation
 * (src/search/vector-cache.ts).
 */

interface DocRow {
  seq: string;
  id: string;
  content: string;
  metadata: string | null;
}

const bytes = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const toStored = (r: DocRow): StoredDocument => ({ id: r.id, contentJson: r.content, metadataJson: r.metadata });
const tsQuery = (terms: string[]) => terms.join(" | ");
const DOC_COLUMNS = "seq, id, content::text AS content, metadata::text AS metadata";

/** A write's effect on this node's cached vectors, applied once it committed. */
interface Written<T> {
  result: T;
  indexId: string;
  before: number | undefined;
  after: number;
  changes: VectorChanges;
}

function cosine(query: Float32Array, raw: Buffer): number {
  // A Buffer from pg may not be 4-byte aligned: copy when it is not.
  const aligned = raw.byteOffset % 4 === 0 ? raw : Buffer.from(raw);
  const v = new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
  let s = 0;
  const n = Math.min(v.length, query.length);
  for (let i = 0; i < n; i++) s += v[i]! * query[i]!;
  return s;
}

/** `cacheBytes`: memory for cached vectors (src/search/vector-cache.ts); 0 scans in the database (tests compare). */
export function searchDocumentQueries(ctx: PgContext, cacheBytes = VECTOR_CACHE_BYTES): SearchDocumentStore {
  const cache = new VectorCache(cacheBytes);

  async function state(indexId: string, tx?: Tx) {
    const sql = `SELECT embedder, dimension, documents::int AS documents, generation::float8 AS generation
      FROM search_index_state WHERE index_id = $1${tx ? " FOR UPDATE" : ""}`;
    const rows = await (tx ?? ctx).query<{ embedder: string; dimension: number; documents: number; generation: number }>(
      sql,
      [indexId],
    );
    return rows[0];
  }

  /** Inside a write: the index's new generation (the row is locked by state(…, tx) or the write itself). */
  async function newGenerationIn(tx: Tx, indexId: string): Promise<number> {
    const after = newGeneration();
    await tx.execute("UPDATE search_index_state SET generation = $1 WHERE index_id = $2", [after, indexId]);
    return after;
  }

  /** The name's vectors in this node's memory at the index's current generation; undefined when they do not fit. */
  async function cachedVectors(
    indexId: string,
    namespace: string,
    current: { dimension: number; generation: number; documents: number },
  ) {
    const cached = cache.get(indexId, namespace, current.generation);
    if (cached) return cached;
    // The index's count bounds the name's: a name that cannot fit is never read twice (here, then to scan).
    if (!cache.fits(current.documents, current.dimension)) return undefined;
    // Read after the generation: at worst newer than it, which only costs a reload at the next query.
    const rows = await ctx.query<{ seq: string; embedding: Buffer }>(
      "SELECT seq, embedding FROM search_documents WHERE index_id = $1 AND namespace = $2",
      [indexId, namespace],
    );
    return cache.load(
      indexId,
      namespace,
      current.generation,
      current.dimension,
      rows.length,
      rows.map((r): VectorRow => [Number(r.seq), r.embedding]),
    );
  }

  /** Runs a write, then brings this node's cached vectors in step once it committed. */
  async function writeAndCache<T>(op: (tx: Tx) => Promise<Written<T>>): Promise<T> {
    const done = await ctx.write(op);
    cache.changed(done.indexId, done.before, done.after, done.changes);
    return done.result;
  }

  function selectWhere(indexId: string, namespace: string, selector: DocumentSelector, params: Params): string {
    let where = `d.index_id = ${params.add(indexId)} AND d.namespace = ${params.add(namespace)}`;
    if ("ids" in selector) where += ` AND d.id = ANY(${params.add(selector.ids)}::text[])`;
    else if ("prefix" in selector) {
      where += ` AND left(d.id, length(${params.add(selector.prefix)})) = ${params.add(selector.prefix)}`;
    } else where += ` AND ${postgresFilter(selector.filter, params)}`;
    return where;
  }

  /** Deletes and counts; the cached vectors of the name (of the index when `namespace` is undefined) follow. */
  async function deleteWhere(
    tx: Tx,
    indexId: string,
    namespace: string | undefined,
    where: string,
    params: Params,
    cleared = false,
  ): Promise<Written<number>> {
    const before = (await state(indexId, tx))?.generation;
    const removed = (
      await tx.query<{ seq: string }>(`DELETE FROM search_documents d WHERE ${where} RETURNING d.seq`, params.values)
    ).map((r) => Number(r.seq));
    if (removed.length > 0) {
      await tx.execute("UPDATE search_index_state SET documents = documents - $1 WHERE index_id = $2", [
        removed.length,
        indexId,
      ]);
    }
    const after = await newGenerationIn(tx, indexId);
    const changes: VectorChanges = { ...(namespace === undefined ? {} : { namespace }), removed, cleared };
    return { result: removed.length, indexId, before, after, changes };
  }

  return {
    searchIndexListBySlug: async ({ slug }) =>
      (
        await ctx.query<SearchIndexRow>("SELECT * FROM search_indexes WHERE slug = $1 ORDER BY creation_time, id", [
          slug,
        ])
      ).map(searchIndexFromRow),

    searchDocUpsert: ({ indexId, namespace, docs, embedder, maxDocuments }) =>
      writeAndCache(async (tx) => {
        await tx.execute(
          `INSERT INTO search_index_state (index_id, embedder, dimension) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
          [indexId, embedder.name, embedder.dimension],
        );
        const current = (await state(indexId, tx))!;
        if (current.documents === 0) {
          // An empty index (never filled, or reset) takes whichever embedder fills it now.
          await tx.execute("UPDATE search_index_state SET embedder = $1, dimension = $2 WHERE index_id = $3", [
            embedder.name,
            embedder.dimension,
            indexId,
          ]);
        } else {
          const mismatch = embedderMismatch(namespace, current, embedder);
          if (mismatch) throw mismatch;
        }
        // One row per id (the last wins): ON CONFLICT cannot touch a row twice in one statement.
        const unique = [...new Map(docs.map((d) => [d.id, d])).values()];
        const rows = await tx.query<{ id: string; seq: string; inserted: boolean }>(
          `INSERT INTO search_documents AS d (index_id, namespace, id, content, metadata, text, embedding)
           SELECT $1, $2, u.id, u.content, u.metadata, u.text, u.embedding
           FROM ${arrayRows("u", DOCUMENT_COLUMNS, 3)}
           ON CONFLICT (index_id, namespace, id) DO UPDATE
             SET content = excluded.content, metadata = excluded.metadata, text = excluded.text, embedding = excluded.embedding
           RETURNING d.id, d.seq, (xmax = 0) AS inserted`,
          [
            indexId,
            namespace,
            unique.map((d) => d.id),
            unique.map((d) => d.contentJson),
            unique.map((d) => d.metadataJson),
            unique.map((d) => d.text),
            unique.map((d) => bytes(d.embedding)),
          ],
        );
        const added = rows.filter((r) => r.inserted).length;
        const total = current.documents + added;
        if (maxDocuments >= 0 && added > 0 && total > maxDocuments) {
          throw new AppError(
            "invalid_input",
            `max_vector_count exceeded: the index would hold ${total} documents, its plan allows ${maxDocuments}`,
          );
        }
        if (added > 0) {
          await tx.execute("UPDATE search_index_state SET documents = documents + $1 WHERE index_id = $2", [
            added,
            indexId,
          ]);
        }
        const byId = new Map(unique.map((d) => [d.id, d.embedding]));
        const set = rows.map((r): [number, Float32Array] => [Number(r.seq), byId.get(r.id)!]);
        const after = await newGenerationIn(tx, indexId);
        return { result: undefined, indexId, before: current.generation, after, changes: { namespace, set } };
      }),

    searchDocQuery: async (q) => {
      const current = await state(q.indexId);
      if (!current || current.documents === 0) return [];
      const mismatch = embedderMismatch(q.namespace, current, q.embedder);
      if (mismatch) throw mismatch;
      const sides = querySides(q);
      const where = (params: Params) => {
        let w = `d.index_id = ${params.add(q.indexId)} AND d.namespace = ${params.add(q.namespace)}`;
        if (q.filter) w += ` AND ${postgresFilter(q.filter, params)}`;
        return w;
      };
      const matrix = sides.semantic ? await cachedVectors(q.indexId, q.namespace, current) : undefined;
      /** Without the cache: every vector's similarity, read by the semantic side, for the full-text side too. */
      let similarities: Map<number, number> | undefined;
      // The primitives of the hybrid query (src/search/hybrid.ts), on this pool.
      return hybridSearch<StoredDocument>(q, {
        topSemantic: async (k) => {
          if (matrix) {
            let keys: number[] | undefined;
            if (q.filter) {
              const params = new Params();
              keys = (
                await ctx.query<{ seq: string }>(`SELECT seq FROM search_documents d WHERE ${where(params)}`, params.values)
              ).map((r) => Number(r.seq));
            }
            return matrix.nearest(q.embedding, k, keys);
          }
          // Too large for this node's memory: every vector that passes the filter is read and scored here.
          const params = new Params();
          const rows = await ctx.query<{ seq: string; embedding: Buffer }>(
            `SELECT seq, embedding FROM search_documents d WHERE ${where(params)}`,
            params.values,
          );
          const scored = rows.map((r) => ({ key: Number(r.seq), value: cosine(q.embedding, r.embedding) }));
          scored.sort((a, b) => b.value - a.value);
          // Every row's similarity is known already: the full-text hits get theirs from here.
          if (sides.fulltext) similarities = new Map(scored.map((s) => [s.key, s.value]));
          return scored.slice(0, k);
        },
        topFulltext: async (k, semanticKeys) => {
          // One round trip: the best full-text matches, and the full-text scores of the semantic candidates (read
          // by primary key; the match test sits in the select list so the planner does not search the GIN index
          // again).
          const params = new Params();
          const query = params.add(tsQuery(q.terms));
          // The matches come from the GIN index first (MATERIALIZED): before ANALYZE has seen a bulk upsert, the
          // planner took the (index, name) b-tree as more selective and tested every document of the name instead.
          const best = `WITH d AS MATERIALIZED (
              SELECT seq, index_id, namespace, content, metadata, tsv FROM search_documents
              WHERE tsv @@ to_tsquery('english', ${query}))
            SELECT d.seq, ts_rank(d.tsv, to_tsquery('english', ${query})) AS value, true AS best
            FROM d WHERE ${where(params)} ORDER BY value DESC LIMIT ${params.add(k)}`;
          const ofSemantic = `SELECT seq, CASE WHEN tsv @@ q THEN ts_rank(tsv, q) ELSE 0 END, false
            FROM search_documents, to_tsquery('english', ${query}) q WHERE seq = ANY(${params.add([...semanticKeys])}::bigint[])`;
          const rows = await ctx.query<{ seq: string; value: number; best: boolean }>(
            `(${best}) UNION ALL (${ofSemantic})`,
            params.values,
          );
          const scored = rows.map((r) => ({ key: Number(r.seq), value: r.value, best: r.best }));
          return { top: scored.filter((r) => r.best), of: scored.filter((r) => !r.best) };
        },
        semanticOf: async (keys) =>
          matrix
            ? matrix.similarities(q.embedding, keys)
            : keys.map((key) => ({ key, value: similarities?.get(key) ?? 0 })),
        documents: async (keys) => {
          const rows = await ctx.query<DocRow>(`SELECT ${DOC_COLUMNS} FROM search_documents WHERE seq = ANY($1::bigint[])`, [
            [...keys],
          ]);
          return new Map(rows.map((r) => [Number(r.seq), toStored(r)]));
        },
      });
    },

    searchDocFetch: async ({ indexId, namespace, selector, limit }) => {
      const params = new Params();
      const where = selectWhere(indexId, namespace, selector, params);
      const rows = await ctx.query<DocRow>(
        `SELECT ${DOC_COLUMNS} FROM search_documents d WHERE ${where} ORDER BY d.id${"ids" in selector ? "" : ` LIMIT ${params.add(limit)}`}`,
        params.values,
      );
      if (!("ids" in selector)) return rows.map(toStored);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return selector.ids.map((id) => {
        const row = byId.get(id);
        return row ? toStored(row) : undefined;
      });
    },

    searchDocDelete: ({ indexId, namespace, selector }) =>
      writeAndCache(async (tx) => {
        const params = new Params();
        return deleteWhere(tx, indexId, namespace, selectWhere(indexId, namespace, selector, params), params);
      }),

    searchDocRange: async ({ indexId, namespace, after, limit, prefix }) =>
      (
        await ctx.query<DocRow>(
          `SELECT ${DOC_COLUMNS} FROM search_documents
           WHERE index_id = $1 AND namespace = $2 AND id > $3 AND left(id, length($4)) = $4 ORDER BY id LIMIT $5`,
          [indexId, namespace, after ?? "", prefix ?? "", limit],
        )
      ).map(toStored),

    searchDocReset: async ({ indexId, namespace }) => {
      await writeAndCache(async (tx) => {
        const params = new Params();
        let where = `d.index_id = ${params.add(indexId)}`;
        if (namespace !== undefined) where += ` AND d.namespace = ${params.add(namespace)}`;
        return deleteWhere(tx, indexId, namespace, where, params, true);
      });
    },

    searchDocInfo: async ({ indexId }) => {
      const namespaces = await ctx.query<{ namespace: string; documents: number }>(
        `SELECT namespace, COUNT(*)::int AS documents FROM search_documents WHERE index_id = $1
         GROUP BY namespace ORDER BY namespace COLLATE "C"`,
        [indexId],
      );
      const size = await ctx.query<{ n: string }>(
        `SELECT COALESCE(SUM(pg_column_size(content) + COALESCE(pg_column_size(metadata), 0) + pg_column_size(text)
           + pg_column_size(tsv) + pg_column_size(embedding)), 0) AS n FROM search_documents WHERE index_id = $1`,
        [indexId],
      );
      const current = await state(indexId);
      return {
        namespaces,
        bytes: Number(size[0]?.n ?? 0),
        ...(current ? { embedder: { name: current.embedder, dimension: current.dimension } } : {}),
      };
    },

    searchUsageConsume: ({ indexId, kind, n, now, since, limit }) =>
      ctx.write(async (tx) => {
        // A limited consume is serialised per index and kind across nodes by an advisory lock, not a row lock: the
        // group commit may put it in one transaction with upserts that lock the index's rows, and row locks taken
        // in two orders would deadlock. An unlimited one (a flush of buffered counts) needs no lock.
        if (limit >= 0) {
          await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`ferry-search-usage:${indexId}:${kind}`]);
        }
        const rows = await tx.query<{ n: string }>(
          "SELECT COALESCE(SUM(count), 0) AS n FROM search_usage WHERE index_id = $1 AND kind = $2 AND minute >= $3",
          [indexId, kind, since],
        );
        const used = Number(rows[0]?.n ?? 0);
        if (limit >= 0 && used + n > limit) return { allowed: false, used };
        await tx.execute(
          `INSERT INTO search_usage (index_id, kind, minute, count) VALUES ($1, $2, $3, $4)
           ON CONFLICT (index_id, kind, minute) DO UPDATE SET count = search_usage.count + excluded.count`,
          [indexId, kind, now - (now % 60_000), n],
        );
        return { allowed: true, used: used + n };
      }),

    searchUsageSum: async ({ indexId, kind, since }) => {
      const rows = await ctx.query<{ n: string }>(
        "SELECT COALESCE(SUM(count), 0) AS n FROM search_usage WHERE index_id = $1 AND kind = $2 AND minute >= $3",
        [indexId, kind, since],
      );
      return Number(rows[0]?.n ?? 0);
    },

    searchUsageSeries: async ({ indexId, from, stepMs, count }) => {
      const out = new Array<number>(count).fill(0);
      const rows = await ctx.query<{ minute: string; count: string }>(
        "SELECT minute, count FROM search_usage WHERE index_id = $1 AND minute >= $2 AND minute < $3 AND kind != 'bandwidth'",
        [indexId, from, from + stepMs * count],
      );
      for (const r of rows) {
        const i = Math.floor((Number(r.minute) - from) / stepMs);
        if (i >= 0 && i < count) out[i]! += Number(r.count);
      }
      return out;
    },
  };
}
