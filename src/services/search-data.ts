import { correctedQuery, corrections, TYPO_POOL, vocabularyOf } from "../search/typos.js";
import { type SearchIndex, type SearchLimits, searchLimits } from "../domain/search.js";
import { sameSecret } from "../domain/secrets.js";
import { AppError } from "../errors.js";
import { type DocumentInput, type DocumentView, queryTerms } from "../search/documents.js";
import type { FilterNode } from "../search/filter.js";
import type { DocumentSelector, SearchUsageKind, StoredDocument } from "../store/search-document-store.js";
import type { Services } from "./context.js";
import { searchUsage } from "./search-usage.js";

/**
 * Use cases of the search data plane (docs/search.md): what each route of an index's endpoint does, with the
 * plan limits of docs/management.md "Search indexes" (src/domain/search.ts). `namespace` is the `{i}` index name inside
 * the endpoint. Bodies arrive parsed (src/http/bodies/search-data.ts); the embedder is the server's
 * (`services.embedder`, built in src/server.ts).
 */

const DAY_MS = 86_400_000;

/** Which parts of a document an answer shows besides its id. */
export interface Shown {
  includeData: boolean;
  includeMetadata: boolean;
}

export interface SearchRequest extends Shown {
  query: string;
  topK: number;
  semanticWeight: number;
  filter?: FilterNode;
  reranking: boolean;
}

export interface FetchRequest extends Shown {
  /** Ids or a prefix. */
  selector: DocumentSelector;
}

export interface DeleteRequest {
  selector: DocumentSelector;
}

export interface RangeRequest extends Shown {
  limit: number;
  /** The id the previous page ended with. */
  after?: string;
  prefix?: string;
}

/**
 * The index of the endpoint `/search/<slug>` whose token this is; the read-only token is refused when the route
 * writes (shared docs/search-api.md: 401 without or with a wrong token, 403 for the read-only token on a write).
 */
export async function authenticateSearchIndex(
  services: Pick<Services, "store">,
  p: { slug: string; token: string | undefined; writes: boolean },
): Promise<SearchIndex> {
  const indexes = await services.store.searchIndexListBySlug({ slug: p.slug });
  if (indexes.length === 0) throw new AppError("not_found", `search index ${p.slug} not found`);
  if (p.token === undefined) throw new AppError("unauthorized", "missing Authorization: Bearer <token>");
  for (const index of indexes) {
    if (sameSecret(p.token, index.token)) return index;
    if (sameSecret(p.token, index.readOnlyToken)) {
      if (p.writes) throw new AppError("forbidden", "the read-only token cannot write; use the index's token");
      return index;
    }
  }
  throw new AppError("unauthorized", "invalid token for this search index");
}

function perRequest(limit: number, name: keyof SearchLimits, n: number, what: string): void {
  if (limit >= 0 && n > limit) {
    throw new AppError("invalid_input", `${name} exceeded: ${n} ${what} in one request, the plan allows ${limit}`);
  }
}

const startOfDay = (now: number) => now - (now % DAY_MS);
function startOfMonth(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** Per-second counters of one node: max_writes_per_second and max_query_per_second (docs/search.md "Limits"). */
class RateWindows {
  private readonly windows = new Map<string, { second: number; used: number }>();
  take(key: string, now: number, n: number, limit: number, name: string): void {
    if (limit < 0) return;
    const second = Math.floor(now / 1000);
    let w = this.windows.get(key);
    if (!w || w.second !== second) {
      if (this.windows.size > 10_000) this.windows.clear();
      w = { second, used: 0 };
      this.windows.set(key, w);
    }
    if (w.used + n > limit) {
      throw new AppError("rate_limited", `${name} exceeded: the plan allows ${limit} per second`, {
        "retry-after": "1",
      });
    }
    w.used += n;
  }
}

function view(doc: StoredDocument, shown: Shown): DocumentView {
  const out: DocumentView = { id: doc.id };
  if (shown.includeData) out.content = JSON.parse(doc.contentJson) as Record<string, unknown>;
  if (shown.includeMetadata) {
    out.metadata = doc.metadataJson === null ? null : (JSON.parse(doc.metadataJson) as Record<string, unknown>);
  }
  return out;
}

/** The base64url of the last id returned: the `cursor` of the next page (src/http/bodies/search-data.ts reads it). */
const encodeCursor = (id: string) => Buffer.from(id, "utf8").toString("base64url");

export function searchDataPlane(services: Services) {
  const { store, clock, embedder } = services;
  const rates = new RateWindows();
  const limitsOf = (index: SearchIndex) => searchLimits[index.type];

  const usage = searchUsage(store);

  async function consume(index: SearchIndex, kind: SearchUsageKind, n: number, now: number): Promise<void> {
    const limits = limitsOf(index);
    const [since, limit, name] =
      kind === "update"
        ? [startOfDay(now), limits.max_daily_updates, "max_daily_updates"]
        : kind === "query"
          ? [startOfDay(now), limits.max_daily_queries, "max_daily_queries"]
          : [startOfMonth(now), limits.max_monthly_reranks, "max_monthly_reranks"];
    await usage.take({ indexId: index.id, kind, n, now, since, limit }, name);
  }

  /** An operation refused after it was counted (a full index, an embedder down) is not counted. */
  function refund(index: SearchIndex, kind: SearchUsageKind, n: number, now: number): void {
    usage.add(index.id, kind, -n, now);
  }

  function write(index: SearchIndex, n: number, now: number): void {
    rates.take(`${index.id}:w`, now, Math.max(1, n), limitsOf(index).max_writes_per_second, "max_writes_per_second");
  }
  function read(index: SearchIndex, now: number): void {
    rates.take(`${index.id}:q`, now, 1, limitsOf(index).max_query_per_second, "max_query_per_second");
  }

  /** Embeds and checks one dimension, so a store never sees a vector of the wrong size. */
  async function embed(texts: string[]): Promise<{ vectors: Float32Array[]; dimension: number }> {
    const vectors = await embedder.embed(texts);
    return { vectors, dimension: vectors[0]?.length ?? 0 };
  }

  return {
    embedderName: embedder.name,
    /** Counts a request's body against max_monthly_bandwidth before it runs (429 once the month's bytes are spent). */
    async takeBandwidth(index: SearchIndex, bytes: number): Promise<void> {
      const now = clock.now();
      await usage.take(
        {
          indexId: index.id,
          kind: "bandwidth",
          n: bytes,
          now,
          since: startOfMonth(now),
          limit: limitsOf(index).max_monthly_bandwidth,
        },
        "max_monthly_bandwidth",
      );
    },
    /** Counts an answer's body (never refused: the request was already served). */
    addBandwidth: (index: SearchIndex, bytes: number) => usage.add(index.id, "bandwidth", bytes, clock.now()),
    /** Writes the buffered counters (the server is closing). */
    flushUsage: () => usage.flush(),

    async upsert(index: SearchIndex, namespace: string, docs: DocumentInput[]): Promise<"Success"> {
      const now = clock.now();
      perRequest(limitsOf(index).max_writes_per_request, "max_writes_per_request", docs.length, "documents");
      if (docs.length === 0) return "Success";
      write(index, docs.length, now);
      await consume(index, "update", docs.length, now);
      try {
        const { vectors, dimension } = await embed(docs.map((d) => d.text));
        await store.searchDocUpsert({
          indexId: index.id,
          namespace,
          docs: docs.map((d, i) => ({ ...d, embedding: vectors[i]! })),
          embedder: { name: embedder.name, dimension },
          maxDocuments: limitsOf(index).max_vector_count,
        });
      } catch (error) {
        refund(index, "update", docs.length, now);
        throw error;
      }
      return "Success";
    },

    async search(index: SearchIndex, namespace: string, r: SearchRequest) {
      const now = clock.now();
      const { topK, semanticWeight: w, filter } = r;
      perRequest(limitsOf(index).max_reads_per_request, "max_reads_per_request", topK, "results (topK)");
      read(index, now);
      if (r.reranking) await consume(index, "rerank", 1, now);
      await consume(index, "query", 1, now);
      const terms = queryTerms(r.query);
      const { vectors, dimension } = await embed([r.query]);
      const query = (embedding: Float32Array, queryTerms: string[], k: number, weight = w) =>
        store.searchDocQuery({
          indexId: index.id,
          namespace,
          terms: queryTerms,
          embedding,
          embedder: { name: embedder.name, dimension },
          semanticWeight: weight,
          topK: k,
          ...(filter ? { filter } : {}),
        });
      // Up to TYPO_POOL documents, so their words can correct a misspelt query word (docs/search.md "Typo
      // tolerance"); below 25 the candidates and so the first topK are those a topK query gets. A full-text-only
      // query (weight 0) finds nothing for a misspelt word: its pool comes from the semantic side.
      let hits = await query(vectors[0]!, terms, Math.max(topK, TYPO_POOL));
      const pool = w > 0 ? hits : await query(vectors[0]!, terms, TYPO_POOL, 1);
      const fixes = corrections(terms, vocabularyOf(pool.map((h) => h.contentJson)));
      if (fixes.size > 0) {
        const fixed = (await embed([correctedQuery(r.query, fixes)])).vectors[0]!;
        hits = await query(fixed, [...new Set([...terms, ...fixes.values()])], topK);
      }
      return hits.slice(0, topK).map((h) => ({ ...view(h, r), score: h.score }));
    },

    async fetch(index: SearchIndex, namespace: string, r: FetchRequest) {
      const now = clock.now();
      const max = limitsOf(index).max_reads_per_request;
      // Fetch passes its read limit, delete its write limit: ids count against the one of the route.
      if ("ids" in r.selector) perRequest(max, "max_reads_per_request", r.selector.ids.length, "ids");
      read(index, now);
      await consume(index, "query", 1, now);
      const docs = await store.searchDocFetch({
        indexId: index.id,
        namespace,
        selector: r.selector,
        limit: max < 0 ? 1000 : max,
      });
      return docs.map((d) => (d ? view(d, r) : null));
    },

    async delete(index: SearchIndex, namespace: string, r: DeleteRequest) {
      const now = clock.now();
      const sel = r.selector;
      if ("ids" in sel) {
        perRequest(limitsOf(index).max_writes_per_request, "max_writes_per_request", sel.ids.length, "ids");
      }
      const n = "ids" in sel ? sel.ids.length : 1;
      write(index, n, now);
      await consume(index, "update", n, now);
      return { deleted: await store.searchDocDelete({ indexId: index.id, namespace, selector: sel }) };
    },

    async range(index: SearchIndex, namespace: string, r: RangeRequest) {
      const now = clock.now();
      const { limit } = r;
      perRequest(limitsOf(index).max_reads_per_request, "max_reads_per_request", limit, "documents (limit)");
      read(index, now);
      await consume(index, "query", 1, now);
      const docs = await store.searchDocRange({
        indexId: index.id,
        namespace,
        after: r.after,
        limit: limit + 1,
        ...(r.prefix !== undefined ? { prefix: r.prefix } : {}),
      });
      const page = docs.slice(0, limit);
      return {
        nextCursor: docs.length > limit ? encodeCursor(page[page.length - 1]!.id) : "",
        vectors: page.map((d) => view(d, r)),
      };
    },

    async reset(index: SearchIndex, namespace: string | undefined): Promise<"Success"> {
      write(index, 1, clock.now());
      await store.searchDocReset({ indexId: index.id, ...(namespace === undefined ? {} : { namespace }) });
      return "Success";
    },

    async listNamespaces(index: SearchIndex): Promise<string[]> {
      return (await store.searchDocInfo({ indexId: index.id })).namespaces.map((n) => n.namespace);
    },

    async info(index: SearchIndex) {
      const info = await store.searchDocInfo({ indexId: index.id });
      const total = info.namespaces.reduce((s, n) => s + n.documents, 0);
      return {
        vectorCount: total,
        pendingVectorCount: 0,
        indexSize: info.bytes,
        dimension: info.embedder?.dimension ?? 0,
        similarityFunction: "COSINE",
        namespaces: Object.fromEntries(
          info.namespaces.map((n) => [n.namespace, { vectorCount: n.documents, pendingVectorCount: 0 }]),
        ),
      };
    },
  };
}

export type SearchDataPlane = ReturnType<typeof searchDataPlane>;
