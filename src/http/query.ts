import { isStatsPeriod, type StatsPeriod, statsPeriods } from "../domain/stats-period.js";
import { invalidField, quoted } from "../errors.js";
import type { MessageFilter, Order } from "../store/store.js";

export type Query = Record<string, string | string[] | undefined>;

/** A multi-value filter: repeated keys or one comma-separated value (docs/messaging.md "Messages and logs"). */
export function multi(query: Query, key: string): string[] | undefined {
  const raw = query[key];
  if (raw === undefined) return undefined;
  const values = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => v.split(",")).map((v) => v.trim());
  const nonEmpty = values.filter((v) => v !== "");
  return nonEmpty.length > 0 ? nonEmpty : undefined;
}

export function single(query: Query, key: string): string | undefined {
  const raw = query[key];
  return Array.isArray(raw) ? raw[raw.length - 1] : raw;
}

export function intParam(query: Query, key: string, min: number, max: number): number | undefined {
  const raw = single(query, key);
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || n < min || n > max)
    throw invalidField(key, `${quoted(raw)} must be an integer in ${min}..${max}`);
  return n;
}

/**
 * The `cursor` of a paged list (logs, DLQ): absent or empty for the first page; a store cursor (pages of
 * src/store/pages.ts are `seq`s) otherwise, anything else a 400.
 */
export function cursorParam(query: Query): string | undefined {
  const cursor = single(query, "cursor");
  if (cursor === undefined || cursor === "") return undefined;
  if (!/^\d+$/.test(cursor)) throw invalidField("cursor", `${quoted(cursor)} is not a cursor returned by this API`);
  return cursor;
}

/** `period` of the usage statistics and health read-outs (src/domain/stats-period.ts); 1h when absent. */
export function periodParam(query: Query): StatsPeriod {
  const period = single(query, "period") ?? "1h";
  if (!isStatsPeriod(period)) {
    throw invalidField("period", `${quoted(period)} must be one of ${Object.keys(statsPeriods).join(", ")}`);
  }
  return period;
}

export function orderParam(query: Query, fallback: Order): Order {
  const raw = single(query, "order");
  if (raw === undefined || raw === "") return fallback;
  if (raw === "latestFirst" || raw === "earliestFirst") return raw;
  throw invalidField("order", `${quoted(raw)} must be latestFirst or earliestFirst`);
}

/**
 * A key from the request as the field a 400 names. A key that is empty or has blanks, a colon or a quote in it
 * (`?=x`, `{" ": 1}`) is quoted after what it is, so the message still says which one is at fault and where its
 * name ends. A key longer than 64 characters is quoted by its prefix (`quoted`), so the message stays short.
 */
export function keyName(key: string, kind: string): string {
  return /^[^\s:"]{1,64}$/.test(key) ? key : `${kind} ${quoted(key)}`;
}

/** Unknown query keys are refused with a 4xx naming the key, so a misspelt filter never widens a bulk operation. */
export function rejectUnknownKeys(query: Query, allowed: ReadonlySet<string>, tokenKey: string): void {
  for (const key of Object.keys(query)) {
    if (!allowed.has(key) && key !== tokenKey) {
      throw invalidField(keyName(key, "query parameter"), "unknown query parameter");
    }
  }
}

export const MESSAGE_FILTER_KEYS = [
  "messageIds",
  "topicName",
  "queueName",
  "url",
  "host",
  "path",
  "label",
  "flowControlKey",
  "scheduleId",
  "callerIp",
  "callerIP",
  "fromDate",
  "toDate",
] as const;

export function messageFilterFromQuery(query: Query): MessageFilter {
  const f: MessageFilter = {};
  const set = (key: keyof MessageFilter, values: string[] | undefined) => {
    if (values) (f as Record<string, unknown>)[key] = values;
  };
  set("messageIds", multi(query, "messageIds"));
  set("topicName", multi(query, "topicName"));
  set("queueName", multi(query, "queueName"));
  set("url", multi(query, "url"));
  set("host", multi(query, "host"));
  set("path", multi(query, "path"));
  set("label", multi(query, "label"));
  set("flowControlKey", multi(query, "flowControlKey"));
  set("scheduleId", multi(query, "scheduleId"));
  set("callerIp", multi(query, "callerIp") ?? multi(query, "callerIP"));
  const from = intParam(query, "fromDate", 0, Number.MAX_SAFE_INTEGER);
  const to = intParam(query, "toDate", 0, Number.MAX_SAFE_INTEGER);
  if (from !== undefined) f.fromDate = from;
  if (to !== undefined) f.toDate = to;
  return f;
}

/** A JSON body field used as a query value: a string, number or boolean (an object has no text to filter by). */
export function bodyScalar(value: unknown, key: string): string {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return String(value);
  throw invalidField(keyName(key, "body field"), "must be a string, a number or an array of them");
}

/** Filters the DLQ accepts (docs/dlq.md); `api` is deprecated and ignored. */
export const DLQ_FILTER_KEYS: readonly string[] = [
  "dlqIds",
  "messageId",
  "messageIds",
  "url",
  "topicName",
  "scheduleId",
  "queueName",
  "fromDate",
  "toDate",
  "responseStatus",
  "callerIp",
  "callerIP",
  "label",
  "flowControlKey",
  "api",
];
