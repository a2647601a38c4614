import { invalidField } from "../../errors.js";
import { type DocumentInput, documentId, parseDocuments } from "../../search/documents.js";
import { parseFilter } from "../../search/filter.js";
import type {
  DeleteRequest,
  FetchRequest,
  RangeRequest,
  SearchRequest,
  Shown,
} from "../../services/search-data.js";
import type { DocumentSelector } from "../../store/search-document-store.js";

/**
 * The bodies of the search data plane's routes (docs/search.md; the wire contract: shared docs/search-api.md), read
 * into the typed requests of src/services/search-data.ts. The plan's per-request limits are the use cases' to check.
 */

type Body = Record<string, unknown>;

/** The JS client sends `[]` (or nothing) as the body of a call without parameters. */
function objectOf(body: unknown): Body {
  if (body === undefined || body === null || (Array.isArray(body) && body.length === 0)) return {};
  if (typeof body !== "object" || Array.isArray(body)) throw invalidField("body", "must be a JSON object");
  return body as Body;
}

function bool(body: Body, field: string, fallback: boolean): boolean {
  const v = body[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "boolean") throw invalidField(field, "must be a boolean");
  return v;
}

function positiveInt(body: Body, field: string, fallback: number): number {
  const v = body[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw invalidField(field, "must be a positive integer");
  return v;
}

function shown(body: Body): Shown {
  return { includeData: bool(body, "includeData", false), includeMetadata: bool(body, "includeMetadata", false) };
}

/** `""` or `"0"` start; otherwise the base64url of the last id returned (never `"0"`, whatever the ids). */
function cursorOf(cursor: unknown): string | undefined {
  if (cursor === undefined || cursor === null || cursor === "" || cursor === "0" || cursor === 0) return undefined;
  if (typeof cursor !== "string" || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw invalidField("cursor", "is not a cursor this index returned");
  }
  return Buffer.from(cursor, "base64url").toString("utf8");
}

/** Ids (one, a list, or `{ids}`), an id prefix, or (delete only) a filter. */
function selectorOf(body: unknown, allowFilter: boolean): DocumentSelector {
  if (typeof body === "string" || typeof body === "number") return { ids: [documentId(body, "ids[0]")] };
  if (Array.isArray(body)) return selectorOf({ ids: body }, allowFilter);
  if (typeof body !== "object" || body === null) throw invalidField("body", "must name ids, a prefix or a filter");
  const b = body as Body;
  if (b.ids !== undefined) {
    const raw = Array.isArray(b.ids) ? b.ids : [b.ids];
    return { ids: raw.map((id, i) => documentId(id, `ids[${i}]`)) };
  }
  if (b.prefix !== undefined) {
    if (typeof b.prefix !== "string") throw invalidField("prefix", "must be a string");
    return { prefix: b.prefix };
  }
  if (allowFilter && b.filter !== undefined) {
    if (typeof b.filter !== "string") throw invalidField("filter", "must be a string");
    const filter = parseFilter(b.filter);
    if (!filter) throw invalidField("filter", "must not be empty (reset deletes every document)");
    return { filter };
  }
  throw invalidField("body", allowFilter ? "must hold ids, prefix or filter" : "must hold ids or prefix");
}

/** upsert-data: an array of documents, or a single one. */
export function parseUpsertBody(body: unknown): DocumentInput[] {
  return parseDocuments(body);
}

/** search: `{query, topK = 10, semanticWeight = 0.75, filter, includeData, includeMetadata, reranking, …}`. */
export function parseSearchBody(raw: unknown): SearchRequest {
  const body = objectOf(raw);
  if (typeof body.query !== "string") throw invalidField("query", "is required and must be a string");
  const topK = positiveInt(body, "topK", 10);
  const semanticWeight = body.semanticWeight ?? 0.75;
  if (typeof semanticWeight !== "number" || !(semanticWeight >= 0 && semanticWeight <= 1)) {
    throw invalidField("semanticWeight", "must be a number from 0 to 1");
  }
  if (body.filter !== undefined && body.filter !== null && typeof body.filter !== "string") {
    throw invalidField("filter", "must be a string");
  }
  const filter = typeof body.filter === "string" ? parseFilter(body.filter) : undefined;
  const { includeData, includeMetadata } = shown(body);
  // Accepted: without a language model, enrichment is the stemming both stores always apply.
  bool(body, "inputEnrichment", true);
  return {
    query: body.query,
    topK,
    semanticWeight,
    ...(filter ? { filter } : {}),
    includeData,
    includeMetadata,
    reranking: bool(body, "reranking", false),
  };
}

/** fetch: ids (one, a list, or `{ids}`) or `{prefix}`, with `includeData` / `includeMetadata` in an object body. */
export function parseFetchBody(body: unknown): FetchRequest {
  const selector = selectorOf(body, false);
  const b = (typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}) as Body;
  return { selector, ...shown(b) };
}

/** delete: ids (one, a list, or `{ids}`), `{prefix}` or `{filter}`. */
export function parseDeleteBody(body: unknown): DeleteRequest {
  return { selector: selectorOf(body, true) };
}

/** range: `{cursor, limit = 100, prefix, includeData, includeMetadata}`. */
export function parseRangeBody(raw: unknown): RangeRequest {
  const body = objectOf(raw);
  const limit = positiveInt(body, "limit", 100);
  const after = cursorOf(body.cursor);
  if (body.prefix !== undefined && body.prefix !== null && typeof body.prefix !== "string") {
    throw invalidField("prefix", "must be a string");
  }
  return {
    limit,
    ...(after !== undefined ? { after } : {}),
    ...(typeof body.prefix === "string" ? { prefix: body.prefix } : {}),
    ...shown(body),
  };
}
