import type { HeaderMap } from "./headers.js";
import type { LogState, Message, MessageSpec } from "./message.js";
import { type OptionDetails, optionDetails } from "./message-options.js";
import { redactedValue } from "./redact.js";

/**
 * Transition-specific fields of a log entry (docs/messaging.md "Messages and logs"); stored as JSON. On CREATED
 * entries only: the message as published (redacted where asked), shared by its later entries: its body and its
 * options' fields (src/domain/message-options.ts `OptionDetails`).
 */
export interface LogDetails extends OptionDetails {
  error?: string;
  nextDeliveryTime?: number;
  responseStatus?: number;
  responseHeaders?: HeaderMap;
  /** base64 */
  responseBody?: string;
  /** base64 */
  body?: string;
  dlqId?: string;
}

/**
 * The columns a message's log entries and its row (store/message-row-store.ts) copy from the message, so that lists
 * filter by them (reference §1.4 names).
 */
export interface FilterColumns {
  url: string;
  topicName?: string;
  endpointName?: string;
  queueName?: string;
  scheduleId?: string;
  callerIp?: string;
  labels?: string[];
  flowKey?: string;
}

/** One state transition of one message; the filterable columns are copied from the message. */
export interface LogEntry extends FilterColumns {
  accountId: string;
  messageId: string;
  state: LogState;
  time: number;
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
  const details: LogDetails = optionDetails(s);
  if (body !== undefined && body.length > 0) {
    details.body = s.redact?.body ? Buffer.from(redactedValue(body)).toString("base64") : body.toString("base64");
  }
  return details;
}
