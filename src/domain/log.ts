import type { HeaderMap } from "./headers.js";
import type { LogState, Message, MessageSpec } from "./message.js";
import { redactedValue, redactHeaders } from "./redact.js";

/** Transition-specific fields of a log entry (docs/messaging.md "Messages and logs"); stored as JSON. */
export interface LogDetails {
  error?: string;
  nextDeliveryTime?: number;
  responseStatus?: number;
  responseHeaders?: HeaderMap;
  /** base64 */
  responseBody?: string;
  /** On CREATED entries only: the message as published (redacted where asked), shared by its later entries. */
  header?: HeaderMap;
  /** base64 */
  body?: string;
  method?: string;
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
  dlqId?: string;
}

/** One state transition of one message; the filterable columns are copied from the message. */
export interface LogEntry {
  accountId: string;
  messageId: string;
  state: LogState;
  time: number;
  url: string;
  topicName?: string;
  endpointName?: string;
  queueName?: string;
  scheduleId?: string;
  callerIp?: string;
  labels?: string[];
  flowKey?: string;
  details: LogDetails;
}

export function logEntry(m: Message, state: LogState, time: number, details: LogDetails = {}): LogEntry {
  const e: LogEntry = { accountId: m.accountId, messageId: m.id, state, time, url: m.url, details };
  if (m.topicName !== undefined) e.topicName = m.topicName;
  if (m.endpointName !== undefined) e.endpointName = m.endpointName;
  if (m.queueName !== undefined) e.queueName = m.queueName;
  if (m.scheduleId !== undefined) e.scheduleId = m.scheduleId;
  if (m.callerIp !== undefined) e.callerIp = m.callerIp;
  if (m.spec.labels !== undefined) e.labels = m.spec.labels;
  if (m.spec.flowControl !== undefined) e.flowKey = m.spec.flowControl.key;
  return e;
}

/** The CREATED entry carries what the message looked like, with Svc-Redact-Fields applied (one-way). */
export function createdLogEntry(m: Message, time: number): LogEntry {
  return logEntry(m, "CREATED", time, createdDetails(m.spec, m.body));
}

/**
 * The details of a CREATED entry: written out for messages that do not derive their log, and derived from the
 * message row's spec and body for those that do (src/store/derived-log.ts).
 */
export function createdDetails(s: MessageSpec, body: Buffer | undefined): LogDetails {
  const redact = s.redact;
  const details: LogDetails = {
    header: redact ? redactHeaders(s.headers, redact) : s.headers,
    method: s.method,
    maxRetries: s.retries,
  };
  if (body !== undefined && body.length > 0) {
    details.body = redact?.body ? Buffer.from(redactedValue(body)).toString("base64") : body.toString("base64");
  }
  if (s.timeoutMs !== undefined) details.timeout = s.timeoutMs;
  if (s.retryDelayExpr !== undefined) details.retryDelayExpr = s.retryDelayExpr;
  if (s.callback) {
    details.callback = s.callback.url;
    details.callbackHeaders = s.callback.headers;
  }
  if (s.failureCallback) {
    details.failureCallback = s.failureCallback.url;
    details.failureCallbackHeaders = s.failureCallback.headers;
  }
  if (s.flowControl) {
    if (s.flowControl.parallelism !== undefined) details.parallelism = s.flowControl.parallelism;
    if (s.flowControl.rate !== undefined) details.rate = s.flowControl.rate;
    details.period = s.flowControl.periodSec;
  }
  return details;
}
