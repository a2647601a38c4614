import type { HeaderMap } from "../domain/headers.js";
import { newMessageId } from "../domain/ids.js";
import type { AttemptResponse, CallbackConfig, Message, MessageKind, NewMessage } from "../domain/message.js";
import { redactedValue, redactHeaders } from "../domain/redact.js";
import type { CallbackBuilder } from "./outcome.js";

/**
 * Callbacks are ordinary messages (docs/callbacks.md "When they are called"): inserted in the same transaction as the
 * attempt's outcome, then leased, signed (`sub` = the callback URL), retried, logged and counted like any publish.
 * - `Svc-Callback`: one callback per attempt, the 2xx one and every failed one; the last failed one carries
 *   `retried == maxRetries` (docs/callbacks.md "When they are called").
 * - `Svc-Failure-Callback`: exactly once, when the message fails for good (exhausted, or a non-retryable 489),
 *   with the DLQ id (rule 5).
 * Callback messages themselves produce no callbacks.
 */
export const buildCallbacks: CallbackBuilder = ({ message: m, response, outcome, now }) => {
  if (m.kind !== "message") return [];
  const out: NewMessage[] = [];
  if (m.spec.callback) {
    out.push(callbackMessage(m, "callback", m.spec.callback, callbackBody(m, response), now));
  }
  if (m.spec.failureCallback && outcome.kind === "failed") {
    const body = { ...callbackBody(m, response), dlqId: outcome.dlqId };
    out.push(callbackMessage(m, "failure_callback", m.spec.failureCallback, body, now));
  }
  return out;
};

/**
 * The JSON body of docs/callbacks.md "Body", in its field order. Optional fields are omitted when unset
 * (docs/messaging.md "Wire conventions").
 */
export function callbackBody(m: Message, r: AttemptResponse): Record<string, unknown> {
  const body: Record<string, unknown> = {
    // A network error or timeout has no HTTP status: 0, with the cause in `error` (an addition to docs/callbacks.md
    // "Body").
    status: r.status ?? 0,
    header: r.headers,
    // Already truncated to the account's max_message_size by the HTTP client (docs/callbacks.md "When they are
    // called").
    body: r.body.toString("base64"),
    retried: m.retried,
    maxRetries: m.spec.retries,
    sourceMessageId: m.id,
  };
  if (r.status === undefined && r.error !== undefined) body.error = r.error;
  if (m.topicName !== undefined) body.topicName = m.topicName;
  if (m.endpointName !== undefined) body.endpointName = m.endpointName;
  body.url = m.url;
  body.method = m.spec.method;
  body.sourceHeader = sourceHeader(m);
  body.sourceBody = sourceBody(m);
  body.notBefore = String(m.notBefore > 0 ? m.notBefore : m.createdAt);
  body.createdAt = String(m.createdAt);
  if (m.scheduleId !== undefined) body.scheduleId = m.scheduleId;
  if (m.callerIp !== undefined) body.callerIP = m.callerIp;
  return body;
}

/**
 * name → string (repeated values joined as HTTP allows). Fields named in Svc-Redact-Fields stay redacted here:
 * the callback is itself a stored, logged message, and redaction is one-way.
 */
function sourceHeader(m: Message): Record<string, string> {
  const redact = m.spec.redact;
  const headers = redact ? redactHeaders(m.spec.headers, redact) : m.spec.headers;
  return Object.fromEntries(Object.entries(headers).map(([name, values]) => [name, values.join(", ")]));
}

function sourceBody(m: Message): string {
  if (m.body === undefined) return "";
  if (m.spec.redact?.body) return Buffer.from(redactedValue(m.body)).toString("base64");
  return m.body.toString("base64");
}

function callbackMessage(
  source: Message,
  kind: Exclude<MessageKind, "message">,
  config: CallbackConfig,
  body: Record<string, unknown>,
  now: number,
): NewMessage {
  const headers: HeaderMap = { ...config.headers, "Content-Type": ["application/json"] };
  const spec: NewMessage["spec"] = {
    method: config.method ?? "POST",
    headers,
    // Svc-Callback-Retries, or the source message's retries.
    retries: config.retries ?? source.spec.retries,
  };
  if (config.timeoutMs !== undefined) spec.timeoutMs = config.timeoutMs;
  if (config.retryDelayExpr !== undefined) spec.retryDelayExpr = config.retryDelayExpr;
  // Called back in the names its source was published in (docs/callbacks.md): signature, user agent, headers.
  if (source.spec.dialect !== undefined) spec.dialect = source.spec.dialect;
  const message: NewMessage = {
    id: newMessageId(now),
    accountId: source.accountId,
    kind,
    // Always set: queues hold the source's FIFO slot until its callbacks have finished.
    parentId: source.id,
    state: "CREATED",
    url: config.url,
    body: Buffer.from(JSON.stringify(body)),
    spec,
    createdAt: now,
    notBefore: 0,
    dueAt: now,
    retried: 0,
  };
  if (source.callerIp !== undefined) message.callerIp = source.callerIp;
  return message;
}
