import { type LogEntry, logEntry } from "./log.js";
import type { EndedState, Message } from "./message.js";
import { inQueue } from "./queue-slots.js";
import type { Outcome } from "./records.js";

/**
 * The outcome most attempts have: delivered, outside a FIFO queue, creating no callback and not being one. It needs
 * no cancel flag, no queue slot, no parent release and no insert, so the adapters apply it with one DELETE of the
 * leased row (SQLite: per message; PostgreSQL: one for the whole batch's plain deliveries).
 */
export const isPlainDelivery = (p: {
  message: Pick<Message, "parentId" | "kind" | "queueName">;
  outcome: Outcome;
  newMessages: readonly unknown[];
}): boolean => p.outcome.kind === "delivered" && p.newMessages.length === 0 && p.message.parentId === undefined && !inQueue(p.message);

export type FinishKind = Outcome["kind"];

/**
 * How an attempt ends once a cancel request is taken into account (docs/states.md: an ACTIVE message is only marked,
 * and its attempt's outcome honours the mark): a retry becomes a cancel; a delivery or a failure stands.
 * SQLite reads the mark and applies this; PostgreSQL's retry statement applies it in SQL (`AND NOT cancel_requested`).
 */
export const finishKind = (outcome: Outcome, cancelRequested: boolean): FinishKind =>
  cancelRequested && outcome.kind === "retry" ? "canceled" : outcome.kind;

/** The usage metric each way an attempt ends counts under (src/store/store.ts `UsageMetric`). */
const USAGE_METRIC = { delivered: "delivered", retry: "retried", failed: "failed", canceled: "canceled" } as const;

/** The state a row that derives its log keeps once its message ended this way (docs/states.md "The message row"). */
export const ENDED_STATE: Record<Exclude<FinishKind, "retry">, EndedState> = {
  delivered: "DELIVERED",
  failed: "FAILED",
  canceled: "CANCELED",
};

/** What an ended attempt writes besides its row's change: its log entries and its usage count. */
export interface FinishRecords {
  /** Without the DELIVERED entry when the row derives its log: the row's `finished_seq` stands for it. */
  logs: readonly LogEntry[];
  usage: { accountId: string; metric: (typeof USAGE_METRIC)[FinishKind]; count: 1; bytes: number };
  /** The destination's status of this attempt (null: no answer), kept on the row as `last_status`. */
  lastStatus: number | null;
}

/** The status the attempt's DELIVERED, ERROR or FAILED entry carries (none when the destination never answered). */
export function attemptStatus(logs: readonly LogEntry[]): number | null {
  for (const e of logs) {
    if (e.state === "DELIVERED" || e.state === "ERROR" || e.state === "FAILED") return e.details.responseStatus ?? null;
  }
  return null;
}

/**
 * The records of an attempt that ended as `kind` (see `finishKind`), once for both storage adapters: the entries the
 * dispatcher built for its outcome, except that a cancel which won over a retry drops the RETRY entry and logs
 * CANCELED instead; and one usage count, with the body's bytes for a delivery.
 */
export function planFinishRecords(
  p: { message: Message; outcome: Outcome; logs: readonly LogEntry[]; now: number },
  kind: FinishKind,
): FinishRecords {
  const m = p.message;
  let logs = p.logs;
  if (kind === "canceled") {
    logs = logs.filter((entry) => entry.state !== "RETRY");
    if (p.outcome.kind !== "canceled") logs = [...logs, logEntry(m, "CANCELED", p.now)];
  }
  const lastStatus = attemptStatus(p.logs);
  // The row records the delivery (finished_at, finished_seq, last_status) and the log list derives its entry.
  if (kind === "delivered" && m.derivedLog) logs = logs.filter((entry) => entry.state !== "DELIVERED");
  const bytes = kind === "delivered" ? (m.body?.length ?? 0) : 0;
  return { logs, usage: { accountId: m.accountId, metric: USAGE_METRIC[kind], count: 1, bytes }, lastStatus };
}
