import { type Static, type TSchema, Type } from "./common.js";
import { UsagePoint } from "./management.js";
import { inDeclaredOrder } from "./wire-order.js";

/*
 * Search indexes: their management records (docs/management.md "Search indexes") and the answers of the data plane
 * under each index's endpoint (docs/search.md; the contract the official @upstash/search client reads is
 * ../shared/docs/search-api.md).
 */

/** A search plan's limits (src/domain/search.ts); `-1` is unlimited. Bandwidth is bytes, beyond 32 bits. */
export const SearchLimits = Type.Object({
  max_vector_count: Type.Integer(),
  max_monthly_reranks: Type.Integer(),
  max_daily_updates: Type.Integer(),
  max_daily_queries: Type.Integer(),
  max_monthly_bandwidth: Type.Integer(),
  max_writes_per_second: Type.Integer(),
  max_query_per_second: Type.Integer(),
  max_reads_per_request: Type.Integer(),
  max_writes_per_request: Type.Integer(),
});

/**
 * The search-index record, every field in its order (kept on the wire by `inDeclaredOrder`). The partner e-mail
 * field is named in the request's dialect, so exactly one of `partner_email` and `vercel_email` is present.
 */
export const SearchIndexRecord = inDeclaredOrder(
  Type.Object({
    customer_id: Type.String(),
    id: Type.String(),
    name: Type.String(),
    endpoint: Type.String({ description: "Base URL of the index's data plane" }),
    type: Type.Union([Type.Literal("free"), Type.Literal("payg"), Type.Literal("fixed")]),
    region: Type.Union([Type.Literal("eu-west-1"), Type.Literal("us-central1")]),
    partner_email: Type.Optional(Type.String({ description: "Partner e-mail (neutral names); empty when none" })),
    vercel_email: Type.Optional(Type.String({ description: "Partner e-mail (the official SDKs' names)" })),
    token: Type.String(),
    read_only_token: Type.String(),
    ...SearchLimits.properties,
    creation_time: Type.Integer({ description: "Unix seconds" }),
    input_enrichment_enabled: Type.Boolean(),
    throughput_vector: Type.Array(UsagePoint, { description: "Operations per minute of the last hour" }),
  }),
);
export type SearchIndexRecord = Static<typeof SearchIndexRecord>;

/** `GET /v2/search/{id}/stats` (docs/management.md "Search indexes"): documents, size, counters, throughput. */
export const SearchIndexStats = Type.Object({
  vector_count: Type.Integer(),
  pending_vector_count: Type.Integer(),
  index_size: Type.Integer({ description: "Bytes" }),
  dimension: Type.Integer(),
  embedder: Type.String(),
  namespaces: Type.Record(Type.String(), Type.Integer(), { description: "Documents per index name" }),
  daily_updates: Type.Integer(),
  daily_queries: Type.Integer(),
  monthly_reranks: Type.Integer(),
  monthly_bandwidth: Type.Integer({ description: "Bytes" }),
  throughput: Type.Array(UsagePoint),
});
export type SearchIndexStats = Static<typeof SearchIndexStats>;

/** The data plane's success envelope, `{"result": …}` (search-api.md "Transport"). */
const answer = <T extends TSchema>(result: T) => Type.Object({ result });

/** A document as a client reads it back: `content` and `metadata` are the caller's own JSON, shown when asked for. */
export const SearchDocument = Type.Object({
  id: Type.String(),
  content: Type.Optional(Type.Unknown({ description: "The document's content object" })),
  metadata: Type.Optional(Type.Unknown({ description: "The document's metadata object, or null" })),
});
export type SearchDocument = Static<typeof SearchDocument>;

/** `"Success"`: upsert-data, reset and delete-namespace. */
export const SearchSuccess = answer(Type.Literal("Success"));
export type SearchSuccess = Static<typeof SearchSuccess>;

/** search: the hits, best first; a score is in [0, 1] (fractional: a `Number`). */
export const SearchHits = answer(Type.Array(Type.Object({ ...SearchDocument.properties, score: Type.Number() })));
export type SearchHits = Static<typeof SearchHits>;

/** fetch: aligned with the ids asked for, `null` for a missing one (by prefix: the documents found, in id order). */
export const SearchFetched = answer(Type.Array(Type.Union([SearchDocument, Type.Null()])));
export type SearchFetched = Static<typeof SearchFetched>;

/** delete: how many documents were deleted. */
export const SearchDeleted = answer(Type.Object({ deleted: Type.Integer() }));
export type SearchDeleted = Static<typeof SearchDeleted>;

/** range: a page ordered by id; `nextCursor` is "" on the last page. */
export const SearchRange = answer(Type.Object({ nextCursor: Type.String(), vectors: Type.Array(SearchDocument) }));
export type SearchRange = Static<typeof SearchRange>;

export const SearchNamespaces = answer(Type.Array(Type.String()));
export type SearchNamespaces = Static<typeof SearchNamespaces>;

const NamespaceCounts = Type.Object({ vectorCount: Type.Integer(), pendingVectorCount: Type.Integer() });

/** info: counts and size of the whole endpoint and of each index name in it. */
export const SearchInfo = answer(
  Type.Object({
    vectorCount: Type.Integer(),
    pendingVectorCount: Type.Integer(),
    indexSize: Type.Integer({ description: "Bytes" }),
    dimension: Type.Integer(),
    similarityFunction: Type.String(),
    namespaces: Type.Record(Type.String(), NamespaceCounts),
  }),
);
export type SearchInfo = Static<typeof SearchInfo>;
