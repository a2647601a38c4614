import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalidField, quoted } from "../../errors.js";
import type { Services } from "../../services/context.js";
import {
  countDlq,
  deleteDlq,
  deleteDlqMany,
  getDlq,
  listDlq,
  type RetryOverrides,
  retryDlq,
  retryDlqMany,
} from "../../services/dlq.js";
import type { DlqEntry, DlqFilter } from "../../store/dlq-store.js";
import type { WorkflowRun } from "../../domain/workflow.js";
import { failureCallbackInfo } from "../../services/workflow-activity.js";
import { withCreatedAtRuns } from "../../services/workflow-dlq.js";
import { jsonObjectBody } from "../body.js";
import { dlqBodyQuery } from "../bodies/dlq.js";
import { configQuery } from "../destination.js";
import {
  cursorParam,
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
import type { DlqPageEntry, DlqRunFields } from "../schemas/dlq.js";
import { readable } from "../plugins/auth.js";
import { fitJsonPage, truncateBodies } from "../views/page-budget.js";

/** The workflow SDK's DLQ filters (docs/workflows.md "DLQ"). */
const WORKFLOW_KEYS = ["source", "workflowRunId", "workflowUrl"];
/** Listing only: they are read from the entries' runs (docs/workflows.md "DLQ"). */
const WORKFLOW_LIST_KEYS = ["workflowCreatedAt", "failureFunctionState"];
const PAGE_KEYS = new Set([...DLQ_FILTER_KEYS, ...WORKFLOW_KEYS, ...WORKFLOW_LIST_KEYS, "cursor", "count", "order"]);
const BULK_KEYS = new Set([...DLQ_FILTER_KEYS, ...WORKFLOW_KEYS, "cursor", "count"]);
/** The filters of `GET /v2/dlq/count`: those the list's page reads from the table. */
const COUNT_KEYS = new Set([...DLQ_FILTER_KEYS, ...WORKFLOW_KEYS]);
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
  const source = single(query, "source");
  if (source !== undefined && source !== "") {
    if (source !== "workflow" && source !== "message") throw invalidField("source", `"${source}" must be workflow or message`);
    if (source === "workflow") filter.workflowOnly = true;
  }
  const runIds = multi(query, "workflowRunId");
  if (runIds) filter.workflowRunId = runIds;
  const workflowUrl = single(query, "workflowUrl");
  if (workflowUrl !== undefined && workflowUrl !== "") filter.url = [...(filter.url ?? []), workflowUrl];
  const statuses = multi(query, "responseStatus");
  if (statuses) {
    filter.responseStatus = statuses.map((s) => {
      if (!/^\d{1,3}$/.test(s)) throw invalidField("responseStatus", `${quoted(s)} is not an HTTP status code`);
      return Number(s);
    });
  }
  return filter;
}

const CALLBACK_STATES = ["CALLBACK_INPROGRESS", "CALLBACK_SUCCESS", "CALLBACK_FAIL", "CALLBACK_CANCELED"];

/** The workflow SDK's list-only filters (contract E12): the run's creation time and its failure callback's state. */
function workflowListFilter(query: Query): { workflowCreatedAt?: number; failureFunctionState?: string } {
  const out: { workflowCreatedAt?: number; failureFunctionState?: string } = {};
  const created = single(query, "workflowCreatedAt");
  if (created !== undefined && created !== "") {
    if (!/^\d{1,16}$/.test(created)) throw invalidField("workflowCreatedAt", `${quoted(created)} must be a Unix time in ms`);
    out.workflowCreatedAt = Number(created);
  }
  const state = single(query, "failureFunctionState");
  if (state !== undefined && state !== "") {
    if (!CALLBACK_STATES.includes(state)) {
      throw invalidField("failureFunctionState", `${quoted(state)} must be one of ${CALLBACK_STATES.join(", ")}`);
    }
    out.failureFunctionState = state;
  }
  return out;
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
  if (body) Object.assign(query, dlqBodyQuery(body));
  for (const key of REFUSED_KEYS) {
    if (query[key] !== undefined) throw invalidField(key, "is not a dead letter queue filter");
  }
  rejectUnknownKeys(query, allowed, request.dialect.tokenQuery);
  return query;
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
    const runFilter = workflowListFilter(query);
    const filter = await withCreatedAtRuns(services, request.account, dlqFilter(query), runFilter.workflowCreatedAt);
    if (filter === undefined) return { messages: [] };
    const p: Parameters<typeof listDlq>[2] = {
      filter,
      count: pageCount(query),
      order: orderParam(query, "earliestFirst"),
    };
    const cursor = cursorParam(query);
    if (cursor !== undefined) p.cursor = cursor;
    const page = await listDlq(services, request.account, p);
    const runs = await runFieldsOf(services, request.account.id, page.entries);
    // failureFunctionState is read from the logs, not the table: a page may hold fewer entries than `count`.
    const entries =
      runFilter.failureFunctionState === undefined
        ? page.entries
        : page.entries.filter((e) => runs.get(e.dlqId)?.failureCallbackInfo?.state === runFilter.failureFunctionState);
    // Bodies are cut and the page bounded in bytes (page-budget.ts); GET /v2/dlq/{dlqId} answers them whole.
    const fitted = fitJsonPage(
      entries,
      (e) => truncateBodies(dlqRecord(e), ["body", "responseBody"], ["bodyBase64", "responseBodyBase64"]),
      (e) => e.seq,
      page.cursor,
    );
    const messages: DlqPageEntry[] = fitted.records.map((record, i) => ({ ...record, ...runs.get(entries[i]!.dlqId) }));
    // `messages` is always present; `cursor` only when another page follows (never an empty string).
    return fitted.cursor === undefined ? { messages } : { cursor: fitted.cursor, messages };
  });

  // The total of the entries matching the filters (docs/dlq.md "Count"): the console's total, one COUNT per call.
  app.get("/v2/dlq/count", readable, async (request) => {
    const query = readQuery(request, COUNT_KEYS, false);
    return { count: await countDlq(services, request.account, dlqFilter(query)) };
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

/** Entries of workflow steps carry their run's fields (docs/workflows.md "DLQ", contract §6.10), by dlq id. */
async function runFieldsOf(
  services: Services,
  accountId: string,
  entries: DlqEntry[],
): Promise<Map<string, DlqRunFields>> {
  const runs = new Map<string, WorkflowRun | undefined>();
  for (const e of entries) {
    const runId = e.message.spec.workflow?.runId;
    if (runId !== undefined && !runs.has(runId)) runs.set(runId, await services.store.workflowRunGet({ accountId, runId }));
  }
  const out = new Map<string, DlqRunFields>();
  for (const e of entries) {
    const runId = e.message.spec.workflow?.runId;
    if (runId === undefined) continue;
    const run = runs.get(runId);
    const fields: DlqRunFields = { workflowRunId: runId };
    if (run) {
      fields.workflowUrl = run.url;
      fields.workflowCreatedAt = run.createdAt;
      if (run.label !== undefined) fields.label = run.label;
      if (run.config.failureCallback) fields.failureCallback = run.config.failureCallback.url;
      // The failure callback belongs to the entry that failed the run.
      if (run.dlqId === e.dlqId) {
        const info = await failureCallbackInfo(services, run);
        if (info) fields.failureCallbackInfo = info;
      }
    }
    out.set(e.dlqId, fields);
  }
  return out;
}
