import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalidField } from "../../errors.js";
import type { Services } from "../../services/context.js";
import {
  deleteDlq,
  deleteDlqMany,
  getDlq,
  listDlq,
  type RetryOverrides,
  retryDlq,
  retryDlqMany,
} from "../../services/dlq.js";
import type { DlqFilter } from "../../store/store-dlq.js";
import { jsonObjectBody } from "../body.js";
import { configQuery } from "../destination.js";
import {
  bodyScalar,
  DLQ_FILTER_KEYS,
  intParam,
  messageFilterFromQuery,
  multi,
  orderParam,
  type Query,
  rejectUnknownKeys,
  single,
} from "../query.js";
import { dlqRecord } from "../views/dlq-view.js";
import { readable } from "../plugins/auth.js";
import { fitPage, truncateBodies } from "../views/page-budget.js";

const PAGE_KEYS = new Set([...DLQ_FILTER_KEYS, "cursor", "count", "order"]);
const BULK_KEYS = new Set([...DLQ_FILTER_KEYS, "cursor", "count"]);
/** Accepted by message cancel and logs, refused here (docs/dlq.md). */
const REFUSED_KEYS = ["host", "path"];
/** Page size of listing and bulk retry. (Default and max: 100) */
const MAX_PAGE = 100;

function dlqFilter(query: Query): DlqFilter {
  const { host: _host, path: _path, ...common } = messageFilterFromQuery(query);
  const filter: DlqFilter = common;
  const messageIds = [...(multi(query, "messageIds") ?? []), ...(multi(query, "messageId") ?? [])];
  if (messageIds.length > 0) filter.messageIds = messageIds;
  else delete filter.messageIds;
  const dlqIds = multi(query, "dlqIds");
  if (dlqIds) filter.dlqIds = dlqIds;
  const statuses = multi(query, "responseStatus");
  if (statuses) {
    filter.responseStatus = statuses.map((s) => {
      if (!/^\d{1,3}$/.test(s)) throw invalidField("responseStatus", `"${s}" is not an HTTP status code`);
      return Number(s);
    });
  }
  return filter;
}

/** Query keys (and JSON body fields, for the Python and Go SDKs) as one query; unknown keys are a 400 naming them. */
function readQuery(
  request: FastifyRequest,
  allowed: ReadonlySet<string>,
  withBody: boolean,
): Query {
  // Null prototype: a body field named `__proto__` is a key like any other (docs/reliability.md, "Header maps").
  const query = Object.create(null) as Query;
  for (const [key, value] of Object.entries(request.query as Query)) {
    // Retry requests may carry configuration as `svc-*` query keys; they are read separately.
    if (!key.toLowerCase().startsWith(request.dialect.prefixLower)) query[key] = value;
  }
  const body = withBody ? jsonObjectBody(request) : undefined;
  for (const [key, value] of Object.entries(body ?? {})) {
    if (value === null || value === undefined) continue;
    if (key === "dlqIds" && !(Array.isArray(value) && value.every((v) => typeof v === "string"))) {
      throw invalidField("dlqIds", "must be an array of dlq ids");
    }
    query[key] = Array.isArray(value) ? value.map((v) => bodyScalar(v, key)) : bodyScalar(value, key);
  }
  for (const key of REFUSED_KEYS) {
    if (query[key] !== undefined) throw invalidField(key, "is not a dead letter queue filter");
  }
  rejectUnknownKeys(query, allowed, request.dialect.tokenQuery);
  return query;
}

function cursorParam(query: Query): string | undefined {
  const cursor = single(query, "cursor");
  if (cursor === undefined || cursor === "") return undefined;
  if (!/^\d+$/.test(cursor)) throw invalidField("cursor", `"${cursor}" is not a cursor returned by this API`);
  return cursor;
}

/** `count` above the maximum is capped rather than refused: the page is simply full. */
function pageCount(query: Query): number {
  return Math.min(intParam(query, "count", 1, Number.MAX_SAFE_INTEGER) ?? MAX_PAGE, MAX_PAGE);
}

/** Configuration of a retry: the request's `Svc-*` headers and `svc-*` query keys override the original's. */
function overrides(request: FastifyRequest): RetryOverrides {
  const query = configQuery(request.query as Record<string, unknown>, request.dialect);
  return { source: { headers: request.headers, query }, dialect: request.dialect };
}

export function dlqRoutes(app: FastifyInstance, services: Services): void {
  app.get("/v2/dlq", readable, async (request) => {
    const query = readQuery(request, PAGE_KEYS, false);
    const p: Parameters<typeof listDlq>[2] = {
      filter: dlqFilter(query),
      count: pageCount(query),
      order: orderParam(query, "earliestFirst"),
    };
    const cursor = cursorParam(query);
    if (cursor !== undefined) p.cursor = cursor;
    const page = await listDlq(services, request.account, p);
    // Bodies are cut and the page bounded in bytes (page-budget.ts); GET /v2/dlq/{dlqId} answers them whole.
    const fitted = fitPage(
      page.entries,
      (e) => truncateBodies(dlqRecord(e), ["body", "responseBody"], ["bodyBase64", "responseBodyBase64"]),
      (e) => e.seq,
      page.cursor,
    );
    const messages = fitted.records;
    // `messages` is always present; `cursor` only when another page follows (never an empty string).
    return fitted.cursor === undefined ? { messages } : { cursor: fitted.cursor, messages };
  });

  app.get<{ Params: { dlqId: string } }>("/v2/dlq/:dlqId", readable, async (request) =>
    dlqRecord(await getDlq(services, request.account, request.params.dlqId)),
  );

  app.delete<{ Params: { dlqId: string } }>("/v2/dlq/:dlqId", async (request, reply) => {
    await deleteDlq(services, request.account, request.params.dlqId);
    return reply.status(200).send();
  });

  // Bulk delete: dlqIds (query or JSON body), or filters with count and cursor; nothing at all deletes everything.
  app.delete("/v2/dlq", async (request) => {
    const query = readQuery(request, BULK_KEYS, true);
    const filter = dlqFilter(query);
    if (filter.dlqIds) return deleteDlqMany(services, request.account, { filter: { dlqIds: filter.dlqIds } });
    const count = intParam(query, "count", 1, Number.MAX_SAFE_INTEGER);
    const cursor = cursorParam(query);
    const everything = Object.keys(filter).length === 0 && count === undefined && cursor === undefined;
    const p: Parameters<typeof deleteDlqMany>[2] = { filter };
    if (!everything) p.count = count ?? MAX_PAGE;
    if (cursor !== undefined) p.cursor = cursor;
    return deleteDlqMany(services, request.account, p);
  });

  app.post<{ Params: { dlqId: string } }>("/v2/dlq/retry/:dlqId", async (request, reply) => {
    const result = await retryDlq(services, request.account, request.params.dlqId, overrides(request));
    reply.status(201);
    return result.deduplicated ? { messageId: result.messageId, deduplicated: true } : { messageId: result.messageId };
  });

  app.post("/v2/dlq/retry", async (request, reply) => {
    const query = readQuery(request, BULK_KEYS, true);
    const filter = dlqFilter(query);
    const p: Parameters<typeof retryDlqMany>[2] = {
      filter: filter.dlqIds ? { dlqIds: filter.dlqIds } : filter,
      count: pageCount(query),
    };
    const cursor = cursorParam(query);
    if (cursor !== undefined) p.cursor = cursor;
    const result = await retryDlqMany(services, request.account, p, overrides(request));
    reply.status(201);
    return {
      responses: result.responses.map((r) => (r.deduplicated ? { ...r } : { messageId: r.messageId })),
      ...(result.cursor === undefined ? {} : { cursor: result.cursor }),
    };
  });
}
