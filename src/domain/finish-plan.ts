import { type LogEntry, logEntry } from "./log.js";
import type { Message } from "./message.js";
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

/** What an ended attempt writes besides its row's change: its log entries and its usage count. */
export interface FinishRecords {
  logs: readonly LogEntry[];
  usage: { accountId: string; metric: (typeof USAGE_METRIC)[FinishKind]; count: 1; bytes: number };
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
  const bytes = kind === "delivered" ? (m.body?.length ?? 0) : 0;
  return { logs, usage: { accountId: m.accountId, metric: USAGE_METRIC[kind], count: 1, bytes } };
}
