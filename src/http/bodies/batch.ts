import type { Dialect, NamePlace } from "../../domain/dialect.js";
import { emptyHeaderMap, HTTP_TOKEN } from "../../domain/headers.js";
import { validName } from "../../domain/names.js";
import { invalidField } from "../../errors.js";
import type { BatchItem } from "../../services/batch.js";
import { queryKeys, splitDestination } from "../destination.js";
import { keyName } from "../query.js";

/*
 * The items of a batch (`POST /v2/batch`, docs/batch.md), read into the typed items src/services/batch.ts takes.
 * Every refusal is a 400 naming the field; the route decides whether a refused item fails alone or the request.
 */

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
export function parseBatchItem(raw: unknown, dialect: Dialect): BatchItem {
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
export function* batchItemNames(body: unknown[]): Generator<readonly [NamePlace, string]> {
  for (const raw of body) {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) continue;
    const { destination, headers } = raw as Record<string, unknown>;
    if (typeof destination === "string") for (const key of queryKeys(destination)) yield ["query parameter", key];
    if (typeof headers !== "object" || headers === null) continue;
    for (const name of Object.keys(headers)) yield ["header", name];
  }
}

/** True when a batch item carries the run id header: a workflow message (docs/workflows.md). */
export function isWorkflowItem(raw: unknown, runIdKey: string): boolean {
  if (typeof raw !== "object" || raw === null) return false;
  const headers = (raw as { headers?: unknown }).headers;
  if (typeof headers !== "object" || headers === null) return false;
  return Object.keys(headers).some((name) => name.toLowerCase() === runIdKey);
}
