import type { AccountRow as SharedAccountRow, MessageRow as SharedMessageRow } from "../rows-shared.js";
import { joinLabels, urlPart } from "../rows-shared.js";
import type { LogEntry } from "../../domain/log.js";
import { ACCOUNT_COLUMNS, accountColumnValues } from "../adapter-parts.js";
import type { Message } from "../../domain/message.js";
import type { Account } from "../store.js";

/** A `messages` row as pg returns it (BIGINT parsed to numbers, see connection.ts). */
export type MessageRow = SharedMessageRow<boolean>;

/**
 * Column order of a message insert. messages.ts inserts many rows in one statement by passing one array per
 * column to unnest(), so the SQL text never changes with the row count (and is prepared once per connection).
 */
export const MESSAGE_COLUMNS = [
  ["id", "text"],
  ["account_id", "text"],
  ["kind", "text"],
  ["parent_id", "text"],
  ["state", "text"],
  ["due_at", "int8"],
  ["lease_owner", "text"],
  ["lease_until", "int8"],
  ["url", "text"],
  ["url_host", "text"],
  ["url_path", "text"],
  ["body", "bytea"],
  ["spec", "text"],
  ["created_at", "int8"],
  ["not_before", "int8"],
  ["retried", "int4"],
  ["topic_name", "text"],
  ["endpoint_name", "text"],
  ["queue_name", "text"],
  ["schedule_id", "text"],
  ["caller_ip", "text"],
  ["labels", "text"],
  ["flow_key", "text"],
  ["dedup_id", "text"],
  ["derived_log", "bool"],
  ["first_leased_at", "int8"],
] as const;

/**
 * The message insert: unnestInsertSql plus the row's positions in the log (src/store/derived-log.ts), drawn from
 * `log_seq` (migration 060) in row order after the sort (volatile expressions are computed after it): `seq` for the
 * CREATED entry, then `active_seq` for the first ACTIVE entry of a row inserted leased that derives its log.
 */
export function messageInsertSql(): string {
  const names = MESSAGE_COLUMNS.map(([c]) => c);
  const arrays = MESSAGE_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`);
  return `INSERT INTO messages (seq, active_seq, ${names.join(", ")})
    SELECT nextval('log_seq'), CASE WHEN first_leased_at IS NULL THEN NULL ELSE nextval('log_seq') END,
      ${names.join(", ")}
    FROM unnest(${arrays.join(", ")}) WITH ORDINALITY AS r(${names.join(", ")}, ord)
    ORDER BY ord`;
}

/** One value per MESSAGE_COLUMNS entry, in that order. */
export function messageValues(m: Message, leaseOwner: string | null, leaseUntil: number | null): unknown[] {
  return [
    m.id,
    m.accountId,
    m.kind,
    m.parentId ?? null,
    m.state,
    m.dueAt,
    leaseOwner,
    leaseUntil,
    m.url,
    urlPart(m.url, "host"),
    urlPart(m.url, "path"),
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
    m.derivedLog === true,
    m.derivedLog && leaseOwner !== null ? (m.firstLeasedAt ?? null) : null,
  ];
}

export const LOG_COLUMNS = [
  ["account_id", "text"],
  ["message_id", "text"],
  ["state", "text"],
  ["time", "int8"],
  ["url", "text"],
  ["url_host", "text"],
  ["url_path", "text"],
  ["topic_name", "text"],
  ["endpoint_name", "text"],
  ["queue_name", "text"],
  ["schedule_id", "text"],
  ["caller_ip", "text"],
  ["labels", "text"],
  ["flow_key", "text"],
  ["details", "text"],
] as const;

export function logValues(e: LogEntry): unknown[] {
  return [
    e.accountId,
    e.messageId,
    e.state,
    e.time,
    e.url,
    urlPart(e.url, "host"),
    urlPart(e.url, "path"),
    e.topicName ?? null,
    e.endpointName ?? null,
    e.queueName ?? null,
    e.scheduleId ?? null,
    e.callerIp ?? null,
    joinLabels(e.labels),
    e.flowKey ?? null,
    JSON.stringify(e.details),
  ];
}

export type AccountRow = SharedAccountRow<boolean> & { seq: number };

/** One value per ACCOUNT_COLUMNS entry (src/store/adapter-parts.ts), in that order. */
export function accountValues(a: Account): unknown[] {
  const values = accountColumnValues(a);
  return ACCOUNT_COLUMNS.map((c) => values[c]);
}

/** The account insert, shared by accountInsert and customerInsert (a customer with its first account). */
export const insertAccountSql = {
  name: "ferry_account_insert",
  text: `INSERT INTO accounts (${ACCOUNT_COLUMNS.join(", ")}) VALUES (${ACCOUNT_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`,
};

/**
 * `INSERT INTO table (cols) SELECT * FROM unnest($1::t1[], $2::t2[], …) WITH ORDINALITY … ORDER BY ordinality`:
 * any number of rows in one statement whose text never changes. Rows keep their order, so identity columns (the
 * log cursor) follow it.
 */
export function unnestInsertSql(table: string, columns: readonly (readonly [string, string])[], suffix = ""): string {
  const names = columns.map(([c]) => c);
  const arrays = columns.map(([, type], i) => `$${i + 1}::${type}[]`);
  return `INSERT INTO ${table} (${names.join(", ")})
    SELECT ${names.join(", ")} FROM unnest(${arrays.join(", ")}) WITH ORDINALITY AS r(${names.join(", ")}, ord)
    ORDER BY ord ${suffix}`;
}

/** Transposes rows of values into one array per column, for unnestInsertSql. */
export function columnsOf(rows: unknown[][], width: number): unknown[][] {
  const columns: unknown[][] = Array.from({ length: width }, () => []);
  for (const row of rows) for (let i = 0; i < width; i++) columns[i]!.push(row[i]);
  return columns;
}

// The mapping every adapter file reads rows with, written once (rows-shared.ts).
export { accountFromRow, joinLabels, type LogRow, logFromRow, messageFromRow } from "../rows-shared.js";
