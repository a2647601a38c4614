import { invalidField, quoted } from "../errors.js";
import { boundedMemo } from "./bounded-memo.js";
import { parseDurationMs } from "./duration.js";
import { parseFlowControlValue } from "./flow-control-value.js";
import {
  addHeader,
  emptyHeaderMap,
  type HeaderMap,
  refuseUnsendableHeader,
  refuseUnsendableValue,
  unforwardableHeaders,
} from "./headers.js";
import type { CallbackConfig, MessageSpec } from "./message.js";
import type { PlanLimits } from "./plans.js";
import { parseRedactFields } from "./redact.js";
import { compileRetryDelay } from "./retry-delay.js";

/** Incoming configuration: request headers (lower-case names) plus `svc-*` query parameters. */
export interface ConfigSource {
  headers: Record<string, string | string[] | undefined>;
  /** Lower-case `svc-*` keys from the query string; a header of the same name wins. */
  query: ReadonlyMap<string, string>;
}

export interface NamingRules {
  /** `svc-` */
  prefixLower: string;
  /** `Svc-`, for field names in error messages. */
  prefix: string;
}

export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

export interface ParsedConfig {
  spec: MessageSpec;
  /** Unix ms before which the message must not be delivered (0 = now). */
  notBefore: number;
  delayMs: number;
  dedupId?: string;
  contentBasedDedup: boolean;
  /** Svc-Queue-Name, Svc-Cron, Svc-Schedule-Id: read by the routes that own them. */
  raw(name: string): string | undefined;
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(",") : v);

export function parseBool(value: string, field: string): boolean {
  const v = value.trim().toLowerCase();
  if (v === "true") return true;
  if (v === "false") return false;
  throw invalidField(field, `${quoted(value)} must be true or false`);
}

function parseNonNegativeInt(value: string, field: string): number {
  const v = value.trim();
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw invalidField(field, `${quoted(value)} must be a non-negative integer`);
  }
  return Number(v);
}

function parseMethod(value: string, field: string): string {
  const m = value.trim().toUpperCase();
  if (!(METHODS as readonly string[]).includes(m)) {
    throw invalidField(field, `${quoted(value)} is not one of ${METHODS.join(", ")}`);
  }
  return m;
}

/** Longest deduplication id (characters): a key stored per message, not a payload. */
export const MAX_DEDUP_ID = 1024;

/**
 * The one rule for a deduplication id, whichever channel brought it (header, query parameter, batch item header):
 * trimmed, not empty, at most MAX_DEDUP_ID characters, and only what a header value may hold (no control characters,
 * nothing beyond latin-1), so the same id means the same key everywhere.
 */
export function parseDedupId(value: string, field: string): string {
  refuseUnsendableValue(value, field);
  const id = value.trim();
  if (id.length === 0) throw invalidField(field, "must not be empty");
  if (id.length > MAX_DEDUP_ID) throw invalidField(field, `must be at most ${MAX_DEDUP_ID} characters`);
  return id;
}

export function parseHttpUrl(value: string, field: string): string {
  const v = value.trim();
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw invalidField(field, `${quoted(value)} is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalidField(field, `${quoted(value)} has invalid scheme, use http:// or https://`);
  }
  return v;
}

/**
 * The lower-case key of each configuration name under a dialect's prefix (`svc-retries`), made once: a publish reads
 * some 25 of them, and building each key again cost a concatenation and a fresh string to hash on every lookup
 * (docs/threading.md "The P1 path now"). Keyed by prefix; the names are the constants below.
 */
const configKeys = new Map<string, (name: string) => string>();
function configKeyOf(prefixLower: string): (name: string) => string {
  let keyOf = configKeys.get(prefixLower);
  if (!keyOf) configKeys.set(prefixLower, (keyOf = boundedMemo((name) => prefixLower + name.toLowerCase(), 200)));
  return keyOf;
}

/**
 * Reads every publish configuration header (docs/messaging.md "Publish") into a validated spec. Pure: limits and time
 * are passed in. Unknown `Svc-*` headers (such as the SDKs' telemetry) are ignored and never forwarded.
 */
export function parsePublishConfig(
  source: ConfigSource,
  names: NamingRules,
  limits: Pick<PlanLimits, "max_retries" | "max_delay">,
  nowMs: number,
): ParsedConfig {
  const p = names.prefixLower;
  const field = (name: string) => `${names.prefix}${name}`;
  const keyOf = configKeyOf(p);
  const get = (name: string): string | undefined => {
    const key = keyOf(name);
    return first(source.headers[key]) ?? source.query.get(key);
  };

  const headerForward = get("header-forward");
  const forwardAll = headerForward !== undefined && parseBool(headerForward, field("Header-Forward"));

  const headers = emptyHeaderMap();
  const callbackHeaders = emptyHeaderMap();
  const failureCallbackHeaders = emptyHeaderMap();
  const forwardPrefix = `${p}forward-`;
  const callbackPrefix = `${p}callback-`;
  const failurePrefix = `${p}failure-callback-`;
  const callbackKnown = new Set(["timeout", "retries", "retry-delay", "method", "delay"]);
  // `<prefix>Callback-Workflow-RunId` and its group reach the callback as `<prefix>Workflow-RunId`: the workflow SDK
  // reads the run id of a call result or failure callback there (docs/workflows.md, contract §6.3, §6.7).
  const callbackTarget = (rest: string): string | undefined =>
    rest.startsWith("forward-")
      ? rest.slice(8)
      : callbackKnown.has(rest)
        ? undefined
        : rest.startsWith("workflow-") || rest === "feature-set"
          ? p + rest
          : rest;

  // One value rule for every channel (docs/reliability.md "Configuration values"): what a header may carry, whether
  // it came as a request header, a batch item's header or a query parameter.
  // A name from the request is named as it is when short and plain, else quoted by its prefix (docs/reliability.md
  // "Hostile bodies"): a 10,000-character name must not make a 10 KB message.
  const nameOf = (name: string, kind: string) => (/^[!-9;-~]{1,64}$/.test(name) ? name : `${kind} ${quoted(name)}`);
  for (const [key, value] of source.query) refuseUnsendableValue(value, nameOf(key, "query parameter"));
  for (const [name, value] of Object.entries(source.headers)) {
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
      if (target) for (const v of values) addHeader(failureCallbackHeaders, target, v);
    } else if (name.startsWith(callbackPrefix)) {
      const rest = name.slice(callbackPrefix.length);
      const target = callbackTarget(rest);
      if (target !== undefined) refuseUnsendableHeader(target, nameOf(name, "header"));
      if (target) for (const v of values) addHeader(callbackHeaders, target, v);
    } else if (name === "content-type") {
      for (const v of values) addHeader(headers, name, v);
    } else if (forwardAll && !name.startsWith(p) && !unforwardableHeaders.has(name)) {
      for (const v of values) addHeader(headers, name, v);
    }
  }

  const method = parseMethod(get("method") ?? "POST", field("Method"));

  const retriesRaw = get("retries");
  const retries =
    retriesRaw === undefined ? Math.min(3, limits.max_retries) : parseNonNegativeInt(retriesRaw, field("Retries"));
  if (retries > limits.max_retries) {
    throw invalidField(field("Retries"), `${retries} is above the plan's max_retries (${limits.max_retries})`);
  }

  const retryDelayExpr = get("retry-delay")?.trim();
  if (retryDelayExpr !== undefined) compileRetryDelay(retryDelayExpr, field("Retry-Delay"));

  const timeoutRaw = get("timeout");
  const timeoutMs = timeoutRaw === undefined ? undefined : parseDurationMs(timeoutRaw, field("Timeout"));
  if (timeoutMs === 0) throw invalidField(field("Timeout"), "must be greater than 0");

  let delayMs = 0;
  let notBefore = 0;
  const notBeforeRaw = get("not-before");
  const delayRaw = get("delay");
  if (notBeforeRaw !== undefined) {
    // Svc-Not-Before is unix seconds and takes precedence over Svc-Delay.
    notBefore = parseNonNegativeInt(notBeforeRaw, field("Not-Before")) * 1000;
    delayMs = Math.max(0, notBefore - nowMs);
  } else if (delayRaw !== undefined) {
    delayMs = parseDurationMs(delayRaw, field("Delay"));
    notBefore = delayMs > 0 ? nowMs + delayMs : 0;
  }
  if (delayMs > limits.max_delay * 1000) {
    throw invalidField(
      notBeforeRaw !== undefined ? field("Not-Before") : field("Delay"),
      `delay is above the plan's max_delay (${limits.max_delay} s)`,
    );
  }

  const labelsRaw = get("label");
  const labels = labelsRaw
    ?.split(",")
    .map((l) => l.trim())
    .filter((l) => l.length > 0);

  const redactRaw = get("redact-fields");
  const redact = redactRaw === undefined ? undefined : parseRedactFields(redactRaw, field("Redact-Fields"));

  const dedupRaw = get("deduplication-id");
  const dedupId = dedupRaw === undefined ? undefined : parseDedupId(dedupRaw, field("Deduplication-Id"));
  const cbdRaw = get("content-based-deduplication");
  const contentBasedDedup = cbdRaw !== undefined && parseBool(cbdRaw, field("Content-Based-Deduplication"));

  const flowKey = get("flow-control-key")?.trim();
  const flowValue = get("flow-control-value");
  let flowControl: MessageSpec["flowControl"];
  if (flowKey !== undefined && flowKey !== "") {
    if (flowValue === undefined) throw invalidField(field("Flow-Control-Value"), "is required with a flow control key");
    flowControl = { key: flowKey, ...parseFlowControlValue(flowValue, field("Flow-Control-Value")) };
  } else if (flowValue !== undefined) {
    throw invalidField(field("Flow-Control-Key"), "is required with a flow control value");
  }

  const callback = parseCallback(get, "callback", field, callbackHeaders, limits);
  const failureCallback = parseCallback(get, "failure-callback", field, failureCallbackHeaders, limits);

  const spec: MessageSpec = { method, headers, retries };
  if (retryDelayExpr !== undefined) spec.retryDelayExpr = retryDelayExpr;
  if (timeoutMs !== undefined) spec.timeoutMs = timeoutMs;
  if (labels && labels.length > 0) spec.labels = labels;
  if (redact) spec.redact = redact;
  if (flowControl) spec.flowControl = flowControl;
  if (callback) spec.callback = callback;
  if (failureCallback) spec.failureCallback = failureCallback;

  const result: ParsedConfig = { spec, notBefore, delayMs, contentBasedDedup, raw: get };
  if (dedupId !== undefined) result.dedupId = dedupId;
  return result;
}

function parseCallback(
  get: (name: string) => string | undefined,
  kind: "callback" | "failure-callback",
  field: (name: string) => string,
  headers: HeaderMap,
  limits: Pick<PlanLimits, "max_retries">,
): CallbackConfig | undefined {
  const title = kind === "callback" ? "Callback" : "Failure-Callback";
  const urlRaw = get(kind);
  const delay = get(`${kind}-delay`);
  // Seed 3.3 rule 8: a message with a delayed callback is rejected at insertion.
  if (delay !== undefined && parseDurationMs(delay, field(`${title}-Delay`)) > 0) {
    throw invalidField(field(`${title}-Delay`), "delayed callbacks are not supported");
  }
  if (urlRaw === undefined || urlRaw.trim() === "") return undefined;
  const config: CallbackConfig = { url: parseHttpUrl(urlRaw, field(title)), headers };
  const method = get(`${kind}-method`);
  if (method !== undefined) config.method = parseMethod(method, field(`${title}-Method`));
  const retries = get(`${kind}-retries`);
  if (retries !== undefined) {
    config.retries = parseNonNegativeInt(retries, field(`${title}-Retries`));
    if (config.retries > limits.max_retries) {
      throw invalidField(field(`${title}-Retries`), `above the plan's max_retries (${limits.max_retries})`);
    }
  }
  const timeout = get(`${kind}-timeout`);
  if (timeout !== undefined) config.timeoutMs = parseDurationMs(timeout, field(`${title}-Timeout`));
  const retryDelay = get(`${kind}-retry-delay`)?.trim();
  if (retryDelay !== undefined) {
    compileRetryDelay(retryDelay, field(`${title}-Retry-Delay`));
    config.retryDelayExpr = retryDelay;
  }
  return config;
}
