import type { LogEntry } from "./types.js";

/**
 * A message's timeline (docs/console.md "Message"): each attempt's duration, and the tone of each state, pure so
 * the unit tests read them (test/unit/console-logic.test.ts).
 */

/** The badge tone of a state (`StateBadge`), the same for the timeline's dots: delivered green, error and retry amber, failed red. */
const TONES: Record<string, string> = {
  CREATED: "info",
  ACTIVE: "info",
  IN_PROGRESS: "info",
  RETRY: "warn",
  ERROR: "warn",
  DELIVERED: "ok",
  FAILED: "bad",
  CANCELED: "muted",
  CANCEL_REQUESTED: "muted",
  // The Messages list's waiting states (docs/messaging.md "Listing messages").
  DELAYED: "muted",
  QUEUED: "muted",
  FLOW_CONTROL: "warn",
};

export function stateTone(state: string): string {
  return TONES[state] ?? "muted";
}

/** What one attempt took: from its ACTIVE entry to the entry that ended it (ERROR or DELIVERED). */
export interface AttemptTiming {
  /** 1 for the first attempt. */
  attempt: number;
  ms: number;
}

/**
 * The attempt each entry ends, by index in `logs` (oldest first): an ERROR or DELIVERED entry ends the attempt
 * that the ACTIVE entry before it started. A FAILED entry follows its ERROR at the same instant and is no attempt
 * of its own; an ACTIVE without an end yet (in progress) has none.
 */
export function attemptTimings(logs: readonly LogEntry[]): Map<number, AttemptTiming> {
  const out = new Map<number, AttemptTiming>();
  let started: number | undefined;
  let attempt = 0;
  logs.forEach((l, i) => {
    if (l.state === "ACTIVE") {
      started = l.time;
      return;
    }
    if ((l.state === "ERROR" || l.state === "DELIVERED") && started !== undefined) {
      attempt++;
      out.set(i, { attempt, ms: Math.max(0, l.time - started) });
      started = undefined;
    }
  });
  return out;
}

/** `85 ms`, `1.2 s`, `2 min 5 s`: an attempt's duration. */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}
