import type { Message } from "../../domain/message.js";
import { redactedValue, redactHeaders } from "../../domain/redact.js";

type Json = Record<string, unknown>;

/**
 * Sets `key` only when the value is meaningful: zero-valued optional fields are omitted (docs/messaging.md "Wire
 * conventions").
 */
export function put(out: Json, key: string, value: unknown): void {
  if (value === undefined || value === null || value === "") return;
  if (Array.isArray(value) && value.length === 0) return;
  if (typeof value === "object" && !Array.isArray(value) && Object.keys(value as object).length === 0) return;
  out[key] = value;
}

/** `body` when the bytes are valid UTF-8, otherwise `bodyBase64` (docs/messaging.md "Messages and logs"). */
export function putBody(out: Json, key: string, body: Buffer | undefined): void {
  if (body === undefined || body.length === 0) return;
  const text = body.toString("utf8");
  if (Buffer.from(text, "utf8").equals(body)) out[key] = text;
  else out[`${key}Base64`] = body.toString("base64");
}

/** The shared fields of message and DLQ records. */
export function messageRecord(m: Message): Json {
  const s = m.spec;
  const out: Json = {
    messageId: m.id,
    url: m.url,
    method: s.method,
    maxRetries: s.retries,
    notBefore: m.notBefore > 0 ? m.notBefore : m.createdAt,
    createdAt: m.createdAt,
  };
  put(out, "header", s.redact ? redactHeaders(s.headers, s.redact) : s.headers);
  if (s.redact?.body && m.body !== undefined) out.body = redactedValue(m.body);
  else putBody(out, "body", m.body);
  put(out, "topicName", m.topicName);
  put(out, "endpointName", m.endpointName);
  put(out, "queueName", m.queueName);
  put(out, "scheduleId", m.scheduleId);
  put(out, "callerIP", m.callerIp);
  put(out, "retryDelayExpression", s.retryDelayExpr);
  if (s.timeoutMs !== undefined) out.timeout = Math.floor(s.timeoutMs / 1000);
  if (s.callback) {
    out.callback = s.callback.url;
    put(out, "callbackHeader", s.callback.headers);
  }
  if (s.failureCallback) {
    out.failureCallback = s.failureCallback.url;
    put(out, "failureCallbackHeader", s.failureCallback.headers);
  }
  if (s.labels && s.labels.length > 0) {
    out.label = s.labels[0];
    out.labels = s.labels;
  }
  if (s.flowControl) {
    out.flowControlKey = s.flowControl.key;
    put(out, "parallelism", s.flowControl.parallelism);
    put(out, "rate", s.flowControl.rate);
    out.period = s.flowControl.periodSec;
  }
  return out;
}
