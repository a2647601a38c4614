import type { CallbackConfig, MessageSpec } from "./message.js";
import type { RedactSpec } from "./redact.js";

export type ConfigHeaders = Record<string, string | string[]>;

/**
 * The inverse of parsePublishConfig: the lower-case configuration headers that would publish a message with this
 * spec. A DLQ retry lays the retry request's own `Svc-*` headers over these and parses the result, so every
 * override is validated exactly like a publish (docs/dlq.md). Delay and deduplication are not carried over:
 * a retry is a new message, due now.
 */
export function specToConfigHeaders(spec: MessageSpec, prefixLower: string): ConfigHeaders {
  const p = prefixLower;
  const out: ConfigHeaders = {};
  for (const [name, values] of Object.entries(spec.headers)) {
    const lower = name.toLowerCase();
    out[lower === "content-type" ? lower : `${p}forward-${lower}`] = [...values];
  }
  out[`${p}method`] = spec.method;
  out[`${p}retries`] = String(spec.retries);
  if (spec.retryDelayExpr !== undefined) out[`${p}retry-delay`] = spec.retryDelayExpr;
  if (spec.timeoutMs !== undefined) out[`${p}timeout`] = `${spec.timeoutMs}ms`;
  if (spec.labels && spec.labels.length > 0) out[`${p}label`] = spec.labels.join(",");
  if (spec.redact) {
    const fields = redactFields(spec.redact);
    if (fields !== "") out[`${p}redact-fields`] = fields;
  }
  if (spec.flowControl) {
    const fc = spec.flowControl;
    const parts: string[] = [];
    if (fc.parallelism !== undefined) parts.push(`parallelism=${fc.parallelism}`);
    if (fc.rate !== undefined) parts.push(`rate=${fc.rate}`);
    parts.push(`period=${fc.periodSec}s`);
    out[`${p}flow-control-key`] = fc.key;
    out[`${p}flow-control-value`] = parts.join(", ");
  }
  if (spec.callback) callbackHeaders(out, `${p}callback`, spec.callback);
  if (spec.failureCallback) callbackHeaders(out, `${p}failure-callback`, spec.failureCallback);
  return out;
}

function callbackHeaders(out: ConfigHeaders, key: string, c: CallbackConfig): void {
  out[key] = c.url;
  if (c.method !== undefined) out[`${key}-method`] = c.method;
  if (c.retries !== undefined) out[`${key}-retries`] = String(c.retries);
  if (c.timeoutMs !== undefined) out[`${key}-timeout`] = `${c.timeoutMs}ms`;
  if (c.retryDelayExpr !== undefined) out[`${key}-retry-delay`] = c.retryDelayExpr;
  for (const [name, values] of Object.entries(c.headers)) out[`${key}-forward-${name.toLowerCase()}`] = [...values];
}

function redactFields(r: RedactSpec): string {
  const parts: string[] = [];
  if (r.body) parts.push("body");
  if (r.allHeaders) parts.push("header");
  for (const name of r.headers) parts.push(`header[${name}]`);
  return parts.join(",");
}
