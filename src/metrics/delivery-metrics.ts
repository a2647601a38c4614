import type { Message } from "../domain/message.js";
import type { Outcome } from "../domain/records.js";
import {
  attemptDuration,
  callbacks,
  deliveries,
  dlqEntries,
  firstAttemptLatency,
  publishes,
  scheduleTicks,
} from "./metrics.js";

/**
 * One finished attempt whose outcome the store applied: deliveries (or callbacks) by outcome, the attempt's
 * duration, the publish-to-first-attempt latency and DLQ entries. Times are Unix ms from the service clock.
 */
export function recordAttempt(m: Message, outcome: Outcome["kind"], startedAt: number, finishedAt: number): void {
  attemptDuration.observe({ outcome }, Math.max(0, finishedAt - startedAt) / 1000);
  if (m.retried === 0) firstAttemptLatency.observe(Math.max(0, startedAt - Math.max(m.createdAt, m.notBefore)) / 1000);
  if (m.kind === "message") deliveries.inc({ account: m.accountId, outcome });
  else callbacks.inc({ kind: m.kind, outcome });
  if (outcome === "failed") dlqEntries.inc({ account: m.accountId });
}

/** Publish outcomes: each message accepted or deduplicated, or the whole request refused with an error code. */
export function recordPublished(accountId: string, results: { deduplicated: boolean }[]): void {
  let duplicates = 0;
  for (const r of results) if (r.deduplicated) duplicates++;
  if (results.length > duplicates) {
    publishes.inc({ account: accountId, outcome: "accepted", reason: "" }, results.length - duplicates);
  }
  if (duplicates > 0) publishes.inc({ account: accountId, outcome: "duplicate", reason: "" }, duplicates);
}

export function recordPublishRefused(accountId: string, error: unknown): void {
  const code = (error as { code?: unknown }).code;
  // AppError codes form a fixed catalog (src/errors.ts); anything else is one bounded value.
  const reason = (error as { unavailable?: unknown }).unavailable
    ? "unavailable"
    : typeof code === "string" && /^[a-z_]+$/.test(code)
      ? code
      : "internal";
  publishes.inc({ account: accountId, outcome: "refused", reason });
}

/** A schedule's due tick was claimed: fired, or let pass (missed) because it was too old; a paused one is neither. */
export function recordTick(fired: boolean, paused: boolean): void {
  if (fired) scheduleTicks.inc({ outcome: "fired" });
  else if (!paused) scheduleTicks.inc({ outcome: "missed" });
}
