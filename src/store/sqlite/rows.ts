import type { AccountRow as SharedAccountRow, MessageRow as SharedMessageRow } from "../rows-shared.js";
import { joinLabels } from "../rows-shared.js";
import type { LogEntry } from "../../domain/log.js";
import { ACCOUNT_COLUMNS, type AccountColumn, accountColumnValues } from "../adapter-parts.js";
import type { Message } from "../../domain/message.js";
import type { Account } from "../store.js";

/** A `messages` row as better-sqlite3 returns it. */
export type MessageRow = SharedMessageRow<number>;

/** The columns of a message row's INSERT (context.ts), in the order `messageValues` gives their values. */
export const MESSAGE_COLUMNS = [
  "seq",
  "derived_log",
  "first_leased_at",
  "active_seq",
  "id",
  "account_id",
  "kind",
  "parent_id",
  "state",
  "due_at",
  "lease_owner",
  "lease_until",
  "url",
  "body",
  "spec",
  "created_at",
  "not_before",
  "retried",
  "topic_name",
  "endpoint_name",
  "queue_name",
  "schedule_id",
  "caller_ip",
  "labels",
  "flow_key",
  "dedup_id",
] as const;

/**
 * The values of a message row's INSERT, positional in `MESSAGE_COLUMNS` order. Positional, not named: better-sqlite3
 * binds a named parameter by looking its name up on the object, which cost more than the rest of the binding on every
 * publish (docs/threading.md "The P1 path now"). test/store/sqlite-hot-path.test.ts checks the two lists agree.
 */
export function messageValues(
  m: Message,
  leaseOwner: string | null,
  leaseUntil: number | null,
  seq: number,
  activeSeq: number | null,
): unknown[] {
  return [
    seq,
    m.derivedLog ? 1 : 0,
    activeSeq === null ? null : (m.firstLeasedAt ?? null),
    activeSeq,
    m.id,
    m.accountId,
    m.kind,
    m.parentId ?? null,
    m.state,
    m.dueAt,
    leaseOwner,
    leaseUntil,
    m.url,
    m.body ?? null,
    JSON.stringify(m.spec),
    m.createdAt,
    m.notBefore,
    m.retried,
    m.topicName ?? null,
    m.endpointName ?? null,
    m.queueName ?? null,
    m.scheduleId ?? null,
    m.callerIp ?? null,
    joinLabels(m.spec.labels),
    m.spec.flowControl?.key ?? null,
    m.dedupId ?? null,
  ];
}

export function logParams(e: LogEntry, seq: number) {
  return {
    seq,
    account_id: e.accountId,
    message_id: e.messageId,
    state: e.state,
    time: e.time,
    url: e.url,
    topic_name: e.topicName ?? null,
    endpoint_name: e.endpointName ?? null,
    queue_name: e.queueName ?? null,
    schedule_id: e.scheduleId ?? null,
    caller_ip: e.callerIp ?? null,
    labels: joinLabels(e.labels),
    flow_key: e.flowKey ?? null,
    details: JSON.stringify(e.details),
  };
}

export type AccountRow = SharedAccountRow<number>;

export { ACCOUNT_COLUMNS };

/** Named parameters for inserting an account row (flags as 0/1). */
export function accountParams(a: Account): Record<AccountColumn, string | number | null> {
  const values = accountColumnValues(a);
  return Object.fromEntries(
    ACCOUNT_COLUMNS.map((c) => [c, typeof values[c] === "boolean" ? (values[c] ? 1 : 0) : values[c]]),
  ) as Record<AccountColumn, string | number | null>;
}

// The mapping every adapter file reads rows with, written once (rows-shared.ts).
export { accountFromRow, joinLabels, type LogRow, logFromRow, messageFromRow } from "../rows-shared.js";
