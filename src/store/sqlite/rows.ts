import type { AccountRow as SharedAccountRow, MessageRow as SharedMessageRow } from "../rows-shared.js";
import { joinLabels } from "../rows-shared.js";
import type { LogEntry } from "../../domain/log.js";
import { ACCOUNT_COLUMNS, type AccountColumn, accountColumnValues } from "../adapter-parts.js";
import type { Message } from "../../domain/message.js";
import type { Account } from "../store.js";

/** A `messages` row as better-sqlite3 returns it. */
export type MessageRow = SharedMessageRow<number>;

/** Named parameters for inserting a message row (the column list lives in context.ts). */
export function messageParams(
  m: Message,
  leaseOwner: string | null,
  leaseUntil: number | null,
  seq: number,
  activeSeq: number | null,
) {
  return {
    seq,
    derived_log: m.derivedLog ? 1 : 0,
    first_leased_at: activeSeq === null ? null : (m.firstLeasedAt ?? null),
    active_seq: activeSeq,
    id: m.id,
    account_id: m.accountId,
    kind: m.kind,
    parent_id: m.parentId ?? null,
    state: m.state,
    due_at: m.dueAt,
    lease_owner: leaseOwner,
    lease_until: leaseUntil,
    url: m.url,
    body: m.body ?? null,
    spec: JSON.stringify(m.spec),
    created_at: m.createdAt,
    not_before: m.notBefore,
    retried: m.retried,
    topic_name: m.topicName ?? null,
    endpoint_name: m.endpointName ?? null,
    queue_name: m.queueName ?? null,
    schedule_id: m.scheduleId ?? null,
    caller_ip: m.callerIp ?? null,
    labels: joinLabels(m.spec.labels),
    flow_key: m.spec.flowControl?.key ?? null,
    dedup_id: m.dedupId ?? null,
  };
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
