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
 * column (arrayRows), so the SQL text never changes with the row count (and is prepared once per connection).
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
 * `log_seq` (migration 060) in row order (arrayRows): `seq` for the CREATED entry, then `active_seq` for the first
 * ACTIVE entry of a row inserted leased that derives its log.
 */
export function messageInsertSql(): string {
  const names = MESSAGE_COLUMNS.map(([c]) => c);
  return `INSERT INTO messages (seq, active_seq, ${names.join(", ")})
    SELECT nextval('log_seq'), CASE WHEN first_leased_at IS NULL THEN NULL ELSE nextval('log_seq') END,
      ${names.join(", ")}
    FROM ${arrayRows("r", MESSAGE_COLUMNS)}`;
}

/**
 * `(SELECT unnest($1::t1[]) AS c1, unnest($2::t2[]) AS c2, …) AS alias`: parallel arrays as rows, the i-th row
 * made of every array's i-th element (a shorter array gives NULLs). `params`: the first array's parameter number
 * (the others follow it), or each array's parameter (`"$3"`).
 *
 * Not `FROM unnest($1, $2, …)`: there every array is a function scan that first copies its elements into a
 * tuplestore of its own, allocated per call (16 KiB each, 26 of them for a message insert), so each run grew the
 * backend's heap and gave it back, a page fault per 4 KiB (docs/postgres.md "Arrays as rows"). Set-returning
 * functions in a select list run in step, element by element, copying nothing. The rows come in array order: a
 * subquery with set-returning functions in its select list is never merged into the query around it, and nothing in
 * these statements reorders it (an INSERT's SELECT runs without parallel workers), so `nextval` in the outer select
 * list follows the rows' order.
 */
export function arrayRows(
  alias: string,
  columns: readonly (readonly [string, string])[],
  params: number | readonly string[] = 1,
): string {
  const param = (i: number) => (typeof params === "number" ? `$${params + i}` : params[i]!);
  const items = columns.map(([name, type], i) => `unnest(${param(i)}::${type}[]) AS ${name}`);
  return `(SELECT ${items.join(", ")}) AS ${alias}`;
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
 * `INSERT INTO table (cols) SELECT cols FROM (SELECT unnest($1::t1[]) AS c1, …) AS r`: any number of rows in one
 * statement whose text never changes. Rows keep their order (arrayRows), so identity columns (the log cursor)
 * follow it.
 */
export function unnestInsertSql(table: string, columns: readonly (readonly [string, string])[], suffix = ""): string {
  const names = columns.map(([c]) => c);
  return `INSERT INTO ${table} (${names.join(", ")})
    SELECT ${names.join(", ")} FROM ${arrayRows("r", columns)} ${suffix}`;
}

/** Transposes rows of values into one array per column, for unnestInsertSql. */
export function columnsOf(rows: unknown[][], width: number): unknown[][] {
  const columns: unknown[][] = Array.from({ length: width }, () => []);
  for (const row of rows) for (let i = 0; i < width; i++) columns[i]!.push(row[i]);
  return columns;
}

// The mapping every adapter file reads rows with, written once (rows-shared.ts).
export { accountFromRow, joinLabels, type LogRow, logFromRow, messageFromRow } from "../rows-shared.js";
