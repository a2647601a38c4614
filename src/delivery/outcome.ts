import { backoffHintMs, defaultBackoffMs } from "../domain/backoff.js";
import { type LogDetails, type LogEntry, logEntry } from "../domain/log.js";
import type { AttemptResponse, Message, NewMessage } from "../domain/message.js";
import type { DlqIdMinter } from "../domain/dlq-id.js";
import { compileRetryDelay } from "../domain/retry-delay.js";
import type { Outcome } from "../domain/records.js";
import type { WorkflowRun } from "../domain/workflow.js";

/** Builds the callback / failure-callback messages of one attempt (callbacks are ordinary messages). */
export type CallbackBuilder = (p: {
  message: Message;
  response: AttemptResponse;
  outcome: Outcome;
  now: number;
  /** The run of a workflow step: its failure callback carries the run's fields (docs/workflows.md "Failures"). */
  workflow?: WorkflowRun;
}) => NewMessage[];

export interface Decision {
  outcome: Outcome;
  logs: LogEntry[];
  newMessages: NewMessage[];
}

const isSuccess = (r: AttemptResponse) => r.status !== undefined && r.status >= 200 && r.status < 300;

/** 489 with `Svc-NonRetryable-Error: true` fails the message at once (docs/messaging.md "Retries"). */
function isNonRetryable(r: AttemptResponse, headerName: string): boolean {
  if (r.nonRetryable === true) return true;
  return r.status === 489 && r.headers[headerName]?.[0]?.trim().toLowerCase() === "true";
}

export function errorDetails(r: AttemptResponse): LogDetails {
  const d: LogDetails = {};
  if (r.status !== undefined) {
    d.responseStatus = r.status;
    d.responseHeaders = r.headers;
    d.responseBody = r.body.toString("base64");
    d.error = r.error ?? `destination answered ${r.status}`;
  } else {
    d.error = r.error ?? "delivery failed";
  }
  return d;
}

/** Decides what an attempt's response means for the message: delivered, retry at t, failed, or canceled. */
export function decideOutcome(p: {
  message: Message;
  response: AttemptResponse;
  now: number;
  nonRetryableHeader: string;
  callbacks: CallbackBuilder;
  /** Mints the id of a new DLQ entry, unique across nodes (domain/dlq-id.ts). */
  dlqIds: Pick<DlqIdMinter, "next">;
  workflow?: WorkflowRun;
}): Decision {
  const { message: m, response: r, now } = p;
  let outcome: Outcome;
  const logs: LogEntry[] = [];
  if (isSuccess(r)) {
    outcome = { kind: "delivered" };
    logs.push(logEntry(m, "DELIVERED", now, { responseStatus: r.status! }));
  } else {
    logs.push(logEntry(m, "ERROR", now, errorDetails(r)));
    if (m.retried < m.spec.retries && !isNonRetryable(r, p.nonRetryableHeader) && !m.cancelRequested) {
      const dueAt = now + retryDelayMs(m, r, now);
      outcome = { kind: "retry", dueAt };
      logs.push(logEntry(m, "RETRY", now, { nextDeliveryTime: dueAt }));
    } else if (m.cancelRequested) {
      outcome = { kind: "canceled" };
      logs.push(logEntry(m, "CANCELED", now));
    } else {
      const dlqId = p.dlqIds.next(now);
      outcome = {
        kind: "failed",
        dlqId,
        response: { status: r.status, headers: r.headers, body: r.body, error: r.error },
      };
      logs.push(logEntry(m, "FAILED", now, { ...errorDetails(r), dlqId }));
    }
  }
  const built = { message: m, response: r, outcome, now, ...(p.workflow ? { workflow: p.workflow } : {}) };
  return { outcome, logs, newMessages: p.callbacks(built) };
}

/** Destination hint first (up to a day), then the Retry-Delay expression, then the default backoff. */
function retryDelayMs(m: Message, r: AttemptResponse, now: number): number {
  // Null prototype: a destination may answer a header named `__proto__` (docs/reliability.md, "Header maps").
  const flat = Object.create(null) as Record<string, string[]>;
  for (const [k, v] of Object.entries(r.headers)) flat[k.toLowerCase()] = v;
  const hint = backoffHintMs(flat, now);
  if (hint !== undefined) return hint;
  if (m.spec.retryDelayExpr !== undefined) return compileRetryDelay(m.spec.retryDelayExpr, "retryDelay")(m.retried);
  return defaultBackoffMs(m.retried);
}
