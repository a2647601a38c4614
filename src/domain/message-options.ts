import { invalidField, quoted } from "../errors.js";
import {
  type ConfigHeaders,
  type ConfigSource,
  type ParsedConfig,
  parseBool,
  parseDedupId,
  parseHttpUrl,
  parseMethod,
  parseNonNegativeInt,
} from "./config-values.js";
import { parseDurationMs } from "./duration.js";
import { parseFlowControlValue } from "./flow-control-value.js";
import {
  addHeader,
  type HeaderMap,
  refuseUnsendableHeader,
  refuseUnsendableValue,
  unforwardableHeaders,
} from "./headers.js";
import type { CallbackConfig, MessageSpec } from "./message.js";
import type { PlanLimits } from "./plans.js";
import { parseRedactFields, type RedactSpec, redactHeaders } from "./redact.js";
import { compileRetryDelay } from "./retry-delay.js";

/**
 * One descriptor per message option (issue 30 item 1; docs/messaging.md "Publish", "Messages and logs"): its
 * configuration headers, how a publish's headers are parsed into it, how it is written back as headers (a DLQ retry
 * and a replay parse those again, src/domain/spec-headers.ts), and its fields in the records the API answers with
 * (message, DLQ and schedule records; the CREATED log entry's stored details; log entries). The parser
 * (src/domain/publish-config.ts), its reverse, the log details (src/domain/log.ts) and the views
 * (src/http/views/) all read this table, so an option is added in one place; test/unit/message-options.test.ts
 * fails when a MessageSpec field has no descriptor or does not survive parse → reverse → parse.
 *
 * Header names are dialect-neutral (`retries`, `forward-*`): the dialect's prefix is put in front where they are
 * read or written (src/domain/dialect.ts).
 */

/** What parsing one publish reads and fills in (src/domain/publish-config.ts builds it once per publish). */
export interface OptionParse {
  readonly source: ConfigSource;
  /** `svc-` */
  readonly prefixLower: string;
  /** A configuration value by its lower-case name without the prefix (`retries`): the header, else the query key. */
  readonly get: (name: string) => string | undefined;
  /** The name as a refusal shows it: `Retries` → `Svc-Retries`. */
  readonly field: (name: string) => string;
  readonly limits: Pick<PlanLimits, "max_retries" | "max_delay">;
  readonly now: number;
  /** The result; its spec starts with the defaults (POST, no headers, `retries` 0). */
  readonly out: ParsedConfig;
  /** The callbacks' forwarded headers, gathered by the `headers` option's pass over the request. */
  readonly callbackHeaders: HeaderMap;
  readonly failureCallbackHeaders: HeaderMap;
}

/** The options' fields in the message, DLQ and schedule records (the schedule calls `maxRetries` `retries`). */
export interface OptionRecordFields {
  method: string;
  maxRetries: number;
  header?: HeaderMap;
  retryDelayExpression?: string;
  /** Seconds. */
  timeout?: number;
  callback?: string;
  callbackHeader?: HeaderMap;
  failureCallback?: string;
  failureCallbackHeader?: HeaderMap;
  label?: string;
  labels?: string[];
  flowControlKey?: string;
  parallelism?: number;
  rate?: number;
  period?: number;
}

/** The options' fields in a CREATED entry's details, stored as JSON with the entry (so these names stay). */
export interface OptionDetails {
  header?: HeaderMap;
  method?: string;
  /** Milliseconds. */
  timeout?: number;
  maxRetries?: number;
  retryDelayExpr?: string;
  callback?: string;
  callbackHeaders?: HeaderMap;
  failureCallback?: string;
  failureCallbackHeaders?: HeaderMap;
  parallelism?: number;
  rate?: number;
  period?: number;
}

/** What a log entry's options are read from: its details (CREATED's merged in) and its filter columns. */
export interface OptionLogSource {
  details: OptionDetails;
  labels?: string[];
  flowKey?: string;
}

/** The options' fields in a log entry; both spellings the SDKs read are sent (retryDelayExpr/…Expression). */
export interface OptionLogFields {
  header?: HeaderMap;
  method?: string;
  /** Milliseconds. */
  timeout?: number;
  maxRetries?: number;
  retryDelayExpr?: string;
  retryDelayExpression?: string;
  callback?: string;
  callbackHeaders?: HeaderMap;
  failureCallback?: string;
  failureCallbackHeaders?: HeaderMap;
  label?: string;
  labels?: string[];
  flowControlKey?: string;
  parallelism?: number;
  rate?: number;
  period?: number;
}

export interface MessageOption {
  /** The MessageSpec field it fills; absent for the options a publish keeps beside the spec (delay, deduplication). */
  readonly spec?: keyof MessageSpec;
  /** Its configuration headers without the prefix, canonical case (`Retries`); `*` stands for any name. */
  readonly headers: readonly string[];
  /** Reads it from a publish, refusing a bad value with a 400 naming the header. Absent: set by the services. */
  readonly parse?: (p: OptionParse) => void;
  /** Writes it back as the headers that would publish it. Absent: a retry does not carry it over (docs/dlq.md). */
  readonly write?: (spec: MessageSpec, out: ConfigHeaders, prefixLower: string) => void;
  /** Its fields in the message, DLQ and schedule records. */
  readonly record?: (spec: MessageSpec, out: OptionRecordFields) => void;
  /** Its fields in the CREATED entry's details. */
  readonly details?: (spec: MessageSpec, out: OptionDetails) => void;
  /** Its fields in a log entry. */
  readonly log?: (e: OptionLogSource, out: OptionLogFields) => void;
}

const hasKeys = (map: object | undefined): map is object => map !== undefined && Object.keys(map).length > 0;
const nonEmpty = (s: string | undefined): s is string => s !== undefined && s !== "";

/**
 * A name from the request, named as it is when short and plain, else quoted by its kind (docs/reliability.md
 * "Hostile bodies"): a 10,000-character name must not make a 10 KB message.
 */
const nameOf = (name: string, kind: string) => (/^[!-9;-~]{1,64}$/.test(name) ? name : `${kind} ${quoted(name)}`);

const CALLBACK_KNOWN = new Set(["timeout", "retries", "retry-delay", "method", "delay"]);

/** The forwarded headers: `Forward-*`, Content-Type, and every request header with `Header-Forward: true`. */
function parseHeaders(c: OptionParse): void {
  const p = c.prefixLower;
  const headerForward = c.get("header-forward");
  const forwardAll = headerForward !== undefined && parseBool(headerForward, c.field("Header-Forward"));
  const headers = c.out.spec.headers;
  const forwardPrefix = `${p}forward-`;
  const callbackPrefix = `${p}callback-`;
  const failurePrefix = `${p}failure-callback-`;
  // `<prefix>Callback-Workflow-RunId` and its group reach the callback as `<prefix>Workflow-RunId`: the workflow SDK
  // reads the run id of a call result or failure callback there (docs/workflows.md, contract §6.3, §6.7).
  const callbackTarget = (rest: string): string | undefined =>
    rest.startsWith("forward-")
      ? rest.slice(8)
      : CALLBACK_KNOWN.has(rest)
        ? undefined
        : rest.startsWith("workflow-") || rest === "feature-set"
          ? p + rest
          : rest;

  // One value rule for every channel (docs/reliability.md "Configuration values"): what a header may carry, whether
  // it came as a request header, a batch item's header or a query parameter.
  for (const [key, value] of c.source.query) refuseUnsendableValue(value, nameOf(key, "query parameter"));
  for (const [name, value] of Object.entries(c.source.headers)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) refuseUnsendableValue(v, nameOf(name, "header"));
    if (name.startsWith(forwardPrefix)) {
      const target = name.slice(forwardPrefix.length);
      refuseUnsendableHeader(target, nameOf(name, "header"));
      for (const v of values) addHeader(headers, target, v);
    } else if (name.startsWith(failurePrefix)) {
      const rest = name.slice(failurePrefix.length);
      // The Python SDK sends Svc-Failure-Callback-<Name> without Forward-: treat unknown keys as forwarded.
      const target = callbackTarget(rest);
      if (target !== undefined) refuseUnsendableHeader(target, nameOf(name, "header"));
      if (target) for (const v of values) addHeader(c.failureCallbackHeaders, target, v);
    } else if (name.startsWith(callbackPrefix)) {
      const rest = name.slice(callbackPrefix.length);
      const target = callbackTarget(rest);
      if (target !== undefined) refuseUnsendableHeader(target, nameOf(name, "header"));
      if (target) for (const v of values) addHeader(c.callbackHeaders, target, v);
    } else if (name === "content-type") {
      for (const v of values) addHeader(headers, name, v);
    } else if (forwardAll && !name.startsWith(p) && !unforwardableHeaders.has(name)) {
      for (const v of values) addHeader(headers, name, v);
    }
  }
}

function parseCallback(c: OptionParse, kind: "callback" | "failure-callback"): CallbackConfig | undefined {
  const title = kind === "callback" ? "Callback" : "Failure-Callback";
  const urlRaw = c.get(kind);
  const delay = c.get(`${kind}-delay`);
  // Seed 3.3 rule 8: a message with a delayed callback is rejected at insertion.
  if (delay !== undefined && parseDurationMs(delay, c.field(`${title}-Delay`)) > 0) {
    throw invalidField(c.field(`${title}-Delay`), "delayed callbacks are not supported");
  }
  if (urlRaw === undefined || urlRaw.trim() === "") return undefined;
  const headers = kind === "callback" ? c.callbackHeaders : c.failureCallbackHeaders;
  const config: CallbackConfig = { url: parseHttpUrl(urlRaw, c.field(title)), headers };
  const method = c.get(`${kind}-method`);
  if (method !== undefined) config.method = parseMethod(method, c.field(`${title}-Method`));
  const retries = c.get(`${kind}-retries`);
  if (retries !== undefined) {
    config.retries = parseNonNegativeInt(retries, c.field(`${title}-Retries`));
    if (config.retries > c.limits.max_retries) {
      throw invalidField(c.field(`${title}-Retries`), `above the plan's max_retries (${c.limits.max_retries})`);
    }
  }
  const timeout = c.get(`${kind}-timeout`);
  if (timeout !== undefined) config.timeoutMs = parseDurationMs(timeout, c.field(`${title}-Timeout`));
  const retryDelay = c.get(`${kind}-retry-delay`)?.trim();
  if (retryDelay !== undefined) {
    compileRetryDelay(retryDelay, c.field(`${title}-Retry-Delay`));
    config.retryDelayExpr = retryDelay;
  }
  return config;
}

function writeCallback(out: ConfigHeaders, key: string, c: CallbackConfig): void {
  out[key] = c.url;
  if (c.method !== undefined) out[`${key}-method`] = c.method;
  if (c.retries !== undefined) out[`${key}-retries`] = String(c.retries);
  if (c.timeoutMs !== undefined) out[`${key}-timeout`] = `${c.timeoutMs}ms`;
  if (c.retryDelayExpr !== undefined) out[`${key}-retry-delay`] = c.retryDelayExpr;
  for (const [name, values] of Object.entries(c.headers)) out[`${key}-forward-${name.toLowerCase()}`] = [...values];
}

const CALLBACK_HEADERS = (title: string) =>
  [title, `${title}-Method`, `${title}-Retries`, `${title}-Timeout`, `${title}-Retry-Delay`, `${title}-Delay`, `${title}-Forward-*`] as const;

/**
 * The callback and the failure callback: the same headers under their own title (`Callback-…`,
 * `Failure-Callback-…`) and the same fields under their own names (docs/messaging.md "Callbacks").
 */
function callbackOption(which: "callback" | "failureCallback"): MessageOption {
  const kind = which === "callback" ? "callback" : "failure-callback";
  const header = `${which}Header` as const;
  const headers = `${which}Headers` as const;
  return {
    spec: which,
    headers: CALLBACK_HEADERS(which === "callback" ? "Callback" : "Failure-Callback"),
    parse: (c) => {
      const callback = parseCallback(c, kind);
      if (callback) c.out.spec[which] = callback;
    },
    write: (spec, out, p) => {
      const callback = spec[which];
      if (callback) writeCallback(out, `${p}${kind}`, callback);
    },
    record: (spec, out) => {
      const callback = spec[which];
      if (!callback) return;
      out[which] = callback.url;
      if (hasKeys(callback.headers)) out[header] = callback.headers;
    },
    details: (spec, out) => {
      const callback = spec[which];
      if (!callback) return;
      out[which] = callback.url;
      out[headers] = callback.headers;
    },
    log: (e, out) => {
      const url = e.details[which];
      if (nonEmpty(url)) out[which] = url;
      const map = e.details[headers];
      if (hasKeys(map)) out[headers] = map;
    },
  };
}

function redactFields(r: RedactSpec): string {
  const parts: string[] = [];
  if (r.body) parts.push("body");
  if (r.allHeaders) parts.push("header");
  for (const name of r.headers) parts.push(`header[${name}]`);
  return parts.join(",");
}

/**
 * Every option, in the order a publish is parsed (so that of two bad values the same one is named as before).
 * Keyed by the spec field it fills where it fills one.
 */
export const MESSAGE_OPTIONS: readonly MessageOption[] = [
  {
    spec: "headers",
    headers: ["Forward-*", "Header-Forward"],
    parse: parseHeaders,
    write: (spec, out, p) => {
      for (const [name, values] of Object.entries(spec.headers)) {
        const lower = name.toLowerCase();
        out[lower === "content-type" ? lower : `${p}forward-${lower}`] = [...values];
      }
    },
    record: (spec, out) => {
      const header = spec.redact ? redactHeaders(spec.headers, spec.redact) : spec.headers;
      if (hasKeys(header)) out.header = header;
    },
    // Svc-Redact-Fields applies to what is kept (one-way, docs/messaging.md "Redaction").
    details: (spec, out) => {
      out.header = spec.redact ? redactHeaders(spec.headers, spec.redact) : spec.headers;
    },
    log: (e, out) => {
      if (hasKeys(e.details.header)) out.header = e.details.header;
    },
  },
  {
    spec: "method",
    headers: ["Method"],
    parse: (c) => {
      const raw = c.get("method");
      if (raw !== undefined) c.out.spec.method = parseMethod(raw, c.field("Method"));
    },
    write: (spec, out, p) => {
      out[`${p}method`] = spec.method;
    },
    record: (spec, out) => {
      out.method = spec.method;
    },
    details: (spec, out) => {
      out.method = spec.method;
    },
    log: (e, out) => {
      if (nonEmpty(e.details.method)) out.method = e.details.method;
    },
  },
  {
    spec: "retries",
    headers: ["Retries"],
    parse: (c) => {
      const raw = c.get("retries");
      const max = c.limits.max_retries;
      const retries = raw === undefined ? Math.min(3, max) : parseNonNegativeInt(raw, c.field("Retries"));
      if (retries > max) throw invalidField(c.field("Retries"), `${retries} is above the plan's max_retries (${max})`);
      c.out.spec.retries = retries;
    },
    write: (spec, out, p) => {
      out[`${p}retries`] = String(spec.retries);
    },
    record: (spec, out) => {
      out.maxRetries = spec.retries;
    },
    details: (spec, out) => {
      out.maxRetries = spec.retries;
    },
    log: (e, out) => {
      if (e.details.maxRetries !== undefined) out.maxRetries = e.details.maxRetries;
    },
  },
  {
    spec: "retryDelayExpr",
    headers: ["Retry-Delay"],
    parse: (c) => {
      const expr = c.get("retry-delay")?.trim();
      if (expr === undefined) return;
      compileRetryDelay(expr, c.field("Retry-Delay"));
      c.out.spec.retryDelayExpr = expr;
    },
    write: (spec, out, p) => {
      if (spec.retryDelayExpr !== undefined) out[`${p}retry-delay`] = spec.retryDelayExpr;
    },
    record: (spec, out) => {
      if (nonEmpty(spec.retryDelayExpr)) out.retryDelayExpression = spec.retryDelayExpr;
    },
    details: (spec, out) => {
      if (spec.retryDelayExpr !== undefined) out.retryDelayExpr = spec.retryDelayExpr;
    },
    log: (e, out) => {
      const expr = e.details.retryDelayExpr;
      if (nonEmpty(expr)) {
        out.retryDelayExpr = expr;
        out.retryDelayExpression = expr;
      }
    },
  },
  {
    spec: "timeoutMs",
    headers: ["Timeout"],
    parse: (c) => {
      const raw = c.get("timeout");
      if (raw === undefined) return;
      const ms = parseDurationMs(raw, c.field("Timeout"));
      if (ms === 0) throw invalidField(c.field("Timeout"), "must be greater than 0");
      c.out.spec.timeoutMs = ms;
    },
    write: (spec, out, p) => {
      if (spec.timeoutMs !== undefined) out[`${p}timeout`] = `${spec.timeoutMs}ms`;
    },
    // Whole seconds in the records, milliseconds in the logs, as the hosted service answers.
    record: (spec, out) => {
      if (spec.timeoutMs !== undefined) out.timeout = Math.floor(spec.timeoutMs / 1000);
    },
    details: (spec, out) => {
      if (spec.timeoutMs !== undefined) out.timeout = spec.timeoutMs;
    },
    log: (e, out) => {
      if (e.details.timeout !== undefined) out.timeout = e.details.timeout;
    },
  },
  {
    // Svc-Not-Before (unix seconds) wins over Svc-Delay; neither is carried over by a retry (a new message, due now).
    headers: ["Delay", "Not-Before"],
    parse: (c) => {
      const notBeforeRaw = c.get("not-before");
      const delayRaw = c.get("delay");
      const out = c.out;
      if (notBeforeRaw !== undefined) {
        out.notBefore = parseNonNegativeInt(notBeforeRaw, c.field("Not-Before")) * 1000;
        out.delayMs = Math.max(0, out.notBefore - c.now);
      } else if (delayRaw !== undefined) {
        out.delayMs = parseDurationMs(delayRaw, c.field("Delay"));
        out.notBefore = out.delayMs > 0 ? c.now + out.delayMs : 0;
      }
      if (out.delayMs > c.limits.max_delay * 1000) {
        throw invalidField(
          notBeforeRaw !== undefined ? c.field("Not-Before") : c.field("Delay"),
          `delay is above the plan's max_delay (${c.limits.max_delay} s)`,
        );
      }
    },
  },
  {
    spec: "labels",
    headers: ["Label"],
    parse: (c) => {
      const labels = c
        .get("label")
        ?.split(",")
        .map((l) => l.trim())
        .filter((l) => l.length > 0);
      if (labels && labels.length > 0) c.out.spec.labels = labels;
    },
    write: (spec, out, p) => {
      if (spec.labels && spec.labels.length > 0) out[`${p}label`] = spec.labels.join(",");
    },
    // `label` is the first (the field the hosted service had before labels were a list).
    record: (spec, out) => {
      if (spec.labels && spec.labels.length > 0) {
        out.label = spec.labels[0];
        out.labels = spec.labels;
      }
    },
    // A log entry carries its labels as a filter column (src/domain/log.ts FilterColumns), not in its details.
    log: (e, out) => {
      if (e.labels && e.labels.length > 0) {
        out.label = e.labels[0];
        out.labels = e.labels;
      }
    },
  },
  {
    // No wire field of its own: it changes what the header and body fields show (docs/messaging.md "Redaction").
    spec: "redact",
    headers: ["Redact-Fields"],
    parse: (c) => {
      const raw = c.get("redact-fields");
      if (raw !== undefined) c.out.spec.redact = parseRedactFields(raw, c.field("Redact-Fields"));
    },
    // Written even when it names nothing (an empty header): the parse keeps such a spec, so the retry keeps it too.
    write: (spec, out, p) => {
      if (spec.redact) out[`${p}redact-fields`] = redactFields(spec.redact);
    },
  },
  {
    headers: ["Deduplication-Id", "Content-Based-Deduplication"],
    parse: (c) => {
      const dedupRaw = c.get("deduplication-id");
      if (dedupRaw !== undefined) c.out.dedupId = parseDedupId(dedupRaw, c.field("Deduplication-Id"));
      const cbdRaw = c.get("content-based-deduplication");
      c.out.contentBasedDedup = cbdRaw !== undefined && parseBool(cbdRaw, c.field("Content-Based-Deduplication"));
    },
  },
  {
    spec: "flowControl",
    headers: ["Flow-Control-Key", "Flow-Control-Value"],
    parse: (c) => {
      const key = c.get("flow-control-key")?.trim();
      const value = c.get("flow-control-value");
      if (key !== undefined && key !== "") {
        if (value === undefined) throw invalidField(c.field("Flow-Control-Value"), "is required with a flow control key");
        c.out.spec.flowControl = { key, ...parseFlowControlValue(value, c.field("Flow-Control-Value")) };
      } else if (value !== undefined) {
        throw invalidField(c.field("Flow-Control-Key"), "is required with a flow control value");
      }
    },
    write: (spec, out, p) => {
      const fc = spec.flowControl;
      if (!fc) return;
      const parts: string[] = [];
      if (fc.parallelism !== undefined) parts.push(`parallelism=${fc.parallelism}`);
      if (fc.rate !== undefined) parts.push(`rate=${fc.rate}`);
      parts.push(`period=${fc.periodSec}s`);
      out[`${p}flow-control-key`] = fc.key;
      out[`${p}flow-control-value`] = parts.join(", ");
    },
    record: (spec, out) => {
      const fc = spec.flowControl;
      if (!fc) return;
      out.flowControlKey = fc.key;
      if (fc.parallelism !== undefined) out.parallelism = fc.parallelism;
      if (fc.rate !== undefined) out.rate = fc.rate;
      out.period = fc.periodSec;
    },
    details: (spec, out) => {
      const fc = spec.flowControl;
      if (!fc) return;
      if (fc.parallelism !== undefined) out.parallelism = fc.parallelism;
      if (fc.rate !== undefined) out.rate = fc.rate;
      out.period = fc.periodSec;
    },
    // The key is the entry's filter column; entries written before the period was logged show 1 s.
    log: (e, out) => {
      if (e.flowKey === undefined) return;
      out.flowControlKey = e.flowKey;
      if (e.details.parallelism !== undefined) out.parallelism = e.details.parallelism;
      if (e.details.rate !== undefined) out.rate = e.details.rate;
      out.period = e.details.period ?? 1;
    },
  },
  callbackOption("callback"),
  callbackOption("failureCallback"),
  // Set by the services, never by a header: the request's dialect (src/services/publish.ts) and a workflow run's
  // link (src/services/workflow-publish.ts). Neither shows in a record.
  { spec: "dialect", headers: [] },
  { spec: "workflow", headers: [] },
];

const PARSERS = MESSAGE_OPTIONS.flatMap((o) => (o.parse ? [o.parse] : []));
const WRITERS = MESSAGE_OPTIONS.flatMap((o) => (o.write ? [o.write] : []));
const RECORDERS = MESSAGE_OPTIONS.flatMap((o) => (o.record ? [o.record] : []));
const DETAILERS = MESSAGE_OPTIONS.flatMap((o) => (o.details ? [o.details] : []));
const LOGGERS = MESSAGE_OPTIONS.flatMap((o) => (o.log ? [o.log] : []));

/** Runs every option's parse, in the table's order (src/domain/publish-config.ts). */
export function parseOptions(c: OptionParse): void {
  for (const parse of PARSERS) parse(c);
}

/** The configuration headers that would publish a message with this spec (src/domain/spec-headers.ts). */
export function writeOptions(spec: MessageSpec, prefixLower: string): ConfigHeaders {
  const out: ConfigHeaders = {};
  for (const write of WRITERS) write(spec, out, prefixLower);
  return out;
}

/** The options' fields of a message, DLQ or schedule record. */
export function optionRecordFields(spec: MessageSpec): OptionRecordFields {
  const out: OptionRecordFields = { method: spec.method, maxRetries: spec.retries };
  for (const record of RECORDERS) record(spec, out);
  return out;
}

/** The options' fields of a CREATED entry's details. */
export function optionDetails(spec: MessageSpec): OptionDetails {
  const out: OptionDetails = {};
  for (const details of DETAILERS) details(spec, out);
  return out;
}

/** The options' fields of a log entry. */
export function optionLogFields(e: OptionLogSource): OptionLogFields {
  const out: OptionLogFields = {};
  for (const log of LOGGERS) log(e, out);
  return out;
}
