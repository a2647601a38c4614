import type { AttemptResponse, Message } from "../domain/message.js";
import type { Outcome } from "../domain/records.js";
import type { RateLimitedLog } from "../logger.js";

/** Network errors are quoted up to this length: enough for the code and reason, never a page of text. */
const MAX_ERROR = 160;

/** The destination's host, the key failures are rate-limited by; never its path or query, which may carry secrets. */
export function destinationHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(invalid url)";
  }
}

const WHAT = { message: "delivery", callback: "callback", failure_callback: "failure callback" } as const;

/**
 * One `info` line for an attempt that did not deliver (docs/operations.md, "Logs"): a failed attempt that will be
 * retried, or the last one, whose message moved to the DLQ; callbacks say so. Ids, the destination's host, the
 * attempt number and the status (or the network error); never a body, a header, a token or a signature.
 */
export function logFailedAttempt(
  failures: RateLimitedLog,
  p: { message: Message; response: AttemptResponse; outcome: Outcome; now: number },
): void {
  const { message: m, response: r, outcome } = p;
  if (outcome.kind !== "retry" && outcome.kind !== "failed") return;
  const host = destinationHost(m.url);
  const fields: Record<string, unknown> = { messageId: m.id };
  if (m.parentId !== undefined) fields.parentId = m.parentId;
  if (m.scheduleId !== undefined) fields.scheduleId = m.scheduleId;
  fields.host = host;
  fields.attempt = m.retried + 1;
  if (r.status !== undefined) fields.status = r.status;
  else fields.error = (r.error ?? "delivery failed").slice(0, MAX_ERROR);
  if (outcome.kind === "retry") {
    fields.nextAttemptAt = new Date(outcome.dueAt).toISOString();
    failures.info(host, p.now, fields, `${WHAT[m.kind]} attempt failed; retrying`);
  } else {
    fields.dlqId = outcome.dlqId;
    failures.info(host, p.now, fields, `${WHAT[m.kind]} failed; moved to the DLQ`);
  }
}
