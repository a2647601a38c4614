import type { FastifyInstance } from "fastify";
import { AppError, invalidField } from "../../errors.js";
import { type BatchItem, MAX_BATCH_ITEMS, publishBatch } from "../../services/batch.js";
import type { Services } from "../../services/context.js";
import { emptyHeaderMap, HTTP_TOKEN } from "../../domain/headers.js";
import { validName } from "../../domain/names.js";
import { jsonBody } from "../body.js";
import { chooseDialect, type Dialect, type DialectChoice, type NamePlace } from "../../domain/dialect.js";
import { queryKeys, splitDestination } from "../destination.js";
import { keyName } from "../query.js";
import { publishedView } from "../views/published-view.js";

type HeaderValues = Record<string, string | string[]>;

/** Item headers: names are case-insensitive (the JS SDK lower-cases them), values a string or strings. */
function itemHeaders(raw: unknown): HeaderValues {
  if (raw === undefined || raw === null) return emptyHeaderMap<string | string[]>();
  if (typeof raw !== "object" || Array.isArray(raw)) throw invalidField("headers", "must be an object");
  // Null prototype: a header named `__proto__` or `constructor` is only a name here (docs/reliability.md).
  const headers = emptyHeaderMap<string | string[]>();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || value === null) continue;
    if (!HTTP_TOKEN.test(name)) throw invalidField(keyName(`headers.${name}`, "field"), "is not a valid header name");
    const values = (Array.isArray(value) ? value : [value]).map((v) => {
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
        throw invalidField(keyName(`headers.${name}`, "field"), "must be a string or an array of strings");
      }
      return String(v);
    });
    const key = name.toLowerCase();
    const earlier = headers[key];
    const merged = earlier === undefined ? values : [...(Array.isArray(earlier) ? earlier : [earlier]), ...values];
    headers[key] = merged.length === 1 ? merged[0]! : merged;
  }
  return headers;
}

/** `{destination, headers?, body?, queue?}`; nulls mean absent (the Python SDK sends them). */
function parseItem(raw: unknown, dialect: Dialect): BatchItem {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw invalidField("batch item", 'must be an object {"destination", "headers", "body", "queue"}');
  }
  const r = raw as Record<string, unknown>;
  if (typeof r.destination !== "string" || r.destination.trim() === "") {
    throw invalidField("destination", "is required");
  }
  const { destination, config } = splitDestination(r.destination.trim(), dialect);
  if (r.body !== undefined && r.body !== null && typeof r.body !== "string") {
    throw invalidField("body", "must be a string");
  }
  const item: BatchItem = {
    destination,
    source: { headers: itemHeaders(r.headers), query: config },
    body: Buffer.from(typeof r.body === "string" ? r.body : "", "utf8"),
  };
  if (r.queue !== undefined && r.queue !== null && r.queue !== "") {
    item.queueName = validName(r.queue, "queue");
  }
  return item;
}

/** The names of every item that may belong to a dialect: its header names and its destination's query keys. */
function* itemNames(body: unknown[]): Generator<readonly [NamePlace, string]> {
  for (const raw of body) {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) continue;
    const { destination, headers } = raw as Record<string, unknown>;
    if (typeof destination === "string") for (const key of queryKeys(destination)) yield ["query parameter", key];
    if (typeof headers !== "object" || headers === null) continue;
    for (const name of Object.keys(headers)) yield ["header", name];
  }
}

/**
 * The batch's dialect: the request's, continued with every item's names. One batch speaks one dialect: an item
 * in the other one is a 400 for the whole request (docs/messaging.md "Dialects"), nothing sent.
 */
function batchDialect(services: Services, request: { dialectChoice: DialectChoice }, body: unknown[]): Dialect {
  return chooseDialect(services.dialects, itemNames(body), request.dialectChoice).dialect;
}

/**
 * `POST /v2/batch` (docs/batch.md): an array in, an array out in request order. A URL item answers one object, a
 * URL-group item a nested array, and a refused item `{"error": "..."}` while the others are sent.
 */
export function batchRoutes(app: FastifyInstance, services: Services): void {
  app.post("/v2/batch", async (request) => {
    const body = jsonBody(request, {
      max: MAX_BATCH_ITEMS,
      refuse: () =>
        new AppError(
          "payload_too_large",
          `invalid body: batch too large: more than ${MAX_BATCH_ITEMS} items, the limit per request is ${MAX_BATCH_ITEMS} (send several batches)`,
        ),
    });
    if (!Array.isArray(body)) throw invalidField("body", "must be a JSON array of messages");
    const dialect = batchDialect(services, request, body);
    const runIdKey = dialect.key("Workflow-RunId");
    const workflowItem = body.map((raw) => isWorkflowItem(raw, runIdKey));
    const items = body.map((raw, i) => {
      try {
        return parseItem(raw, dialect);
      } catch (error) {
        // The workflow SDK never reads per-item errors: a refused workflow item fails the whole request, before
        // anything is written (docs/workflows.md, contract E1).
        if (error instanceof AppError && !workflowItem[i]) return error;
        throw error;
      }
    });
    const outcomes = await publishBatch(services, request.account, items, request.ip, dialect);
    const refused = outcomes.find((o, i) => o instanceof AppError && workflowItem[i]);
    if (refused) throw refused;
    return outcomes.map((outcome, i) =>
      outcome instanceof AppError
        ? { error: outcome.message }
        : publishedView((items[i] as BatchItem).destination, outcome),
    );
  });
}

/** True when a batch item carries the run id header: a workflow message (docs/workflows.md). */
function isWorkflowItem(raw: unknown, runIdKey: string): boolean {
  if (typeof raw !== "object" || raw === null) return false;
  const headers = (raw as { headers?: unknown }).headers;
  if (typeof headers !== "object" || headers === null) return false;
  return Object.keys(headers).some((name) => name.toLowerCase() === runIdKey);
}
