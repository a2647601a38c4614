import { type LogEntry, logEntry } from "./log.js";
import type { Message } from "./message.js";

/**
 * Cancelling one message (docs/states.md), once for both storage adapters: a request is always logged; a message
 * in flight (ACTIVE) is only marked, and its attempt's outcome honours the request (messageFinish); any other is
 * cancelled at once (its row leaves the live rows, or stays HELD for its callbacks: src/domain/queue-slots.ts).
 */
export function planCancel(m: Message, now: number): { inFlight: boolean; logs: LogEntry[] } {
  const logs = [logEntry(m, "CANCEL_REQUESTED", now)];
  const inFlight = m.state === "ACTIVE";
  if (!inFlight) logs.push(logEntry(m, "CANCELED", now));
  return { inFlight, logs };
}
