import { createdDetails, type LogDetails } from "../domain/log.js";
import type { MessageSpec } from "../domain/message.js";
import type { LogRow } from "./rows-shared.js";
import type { LogFilter } from "./store.js";

/**
 * The log as derived data (docs/states.md "The message row"), shared by both adapters. A message row that derives
 * its log (`derived_log`) stands for three entries of the log list, each with its own position in the one sequence
 * that numbers every entry (SQLite: `id_counters` 'log_seq'; PostgreSQL: the `logs` identity's sequence):
 * - CREATED: `seq` (the row's own, so FIFO order and the entry's position are one number), at `created_at`, its
 *   details the row's spec and body as published (src/domain/log.ts `createdDetails`);
 * - the first ACTIVE: `active_seq`, at `first_leased_at`, no details;
 * - DELIVERED: `finished_seq`, at `finished_at`, `{responseStatus: last_status}`.
 * Every other entry (later ACTIVEs, ERROR, RETRY, FAILED, callbacks' entries, CANCEL_REQUESTED, CANCELED) stays a
 * `logs` row. The log list reads the `logs` rows and these three "arms" as one ordered union.
 */

/** Rows of these states ended and are kept only for their log; every read of live messages excludes them. */
export const ENDED_STATES_SQL = "('DELIVERED', 'FAILED', 'CANCELED')";
/**
 * The condition of a live row, written the same everywhere: the partial indexes of migration 060 (`messages_live`,
 * `messages_queue`, `messages_parent`) carry it, and SQLite uses a partial index only when the query repeats its
 * condition.
 */
export const LIVE_ROW_SQL = `state NOT IN ${ENDED_STATES_SQL}`;

export interface DerivedArm {
  state: "CREATED" | "ACTIVE" | "DELIVERED";
  /** The column holding the entry's position in the log. */
  seq: string;
  /** The column holding the entry's time (what fromDate/toDate apply to). */
  time: string;
  /** The condition of a row that has this entry (each has an index on (account_id, seq column)). */
  present: string;
}

const ARMS: readonly DerivedArm[] = [
  { state: "CREATED", seq: "seq", time: "created_at", present: "derived_log" },
  { state: "ACTIVE", seq: "active_seq", time: "first_leased_at", present: "active_seq IS NOT NULL" },
  { state: "DELIVERED", seq: "finished_seq", time: "finished_at", present: "finished_seq IS NOT NULL" },
];

/** The derived entries a filter can match: all, or those whose state it names. */
export const derivedArms = (filter: LogFilter): readonly DerivedArm[] =>
  filter.state && filter.state.length > 0 ? ARMS.filter((a) => filter.state!.includes(a.state)) : ARMS;

/** The filter an arm applies to message rows: its state is the arm's, so the state filter chose the arm already. */
export const armFilter = (filter: LogFilter): LogFilter => {
  const { state: _state, ...rest } = filter;
  return rest;
};

/** Typed NULLs (PostgreSQL needs them for the union's column types; SQLite takes plain NULL). */
export interface NullsOf {
  text: string;
  bytea: string;
  int: string;
}

const COMMON = "url, topic_name, endpoint_name, queue_name, schedule_id, caller_ip, labels, flow_key";

/** The union's columns from the `logs` table. */
export const logsSelect = (n: NullsOf): string =>
  `SELECT seq, account_id, message_id, state, time, ${COMMON}, details, ${n.text} AS spec, ${n.bytea} AS body,
     ${n.int} AS last_status FROM logs`;

/** The union's columns of one arm, from the `messages` table. */
export const armSelect = (a: DerivedArm, n: NullsOf): string =>
  `SELECT ${a.seq} AS seq, account_id, id AS message_id, '${a.state}' AS state, ${a.time} AS time, ${COMMON},
     ${n.text} AS details, ${a.state === "CREATED" ? "spec" : n.text} AS spec,
     ${a.state === "CREATED" ? "body" : n.bytea} AS body,
     ${a.state === "DELIVERED" ? "last_status" : n.int} AS last_status
   FROM messages`;

/** A row of the union: a `logs` row, or a derived entry whose details are computed here. */
export type UnionRow = Omit<LogRow, "details"> & {
  details: string | null;
  spec: string | null;
  body: Buffer | null;
  last_status: number | null;
};

/** The details of a derived CREATED entry, as JSON (as a `logs` row holds them). */
export const derivedCreatedDetails = (spec: string, body: Buffer | null): string =>
  JSON.stringify(createdDetails(JSON.parse(spec) as MessageSpec, body ?? undefined));

/** A union row as the `logs` row it stands for. */
export function unionToLogRow(r: UnionRow): LogRow {
  const { spec, body, last_status, details, ...rest } = r;
  if (details !== null) return { ...rest, details };
  let derived: LogDetails | string = {};
  if (r.state === "CREATED") derived = derivedCreatedDetails(spec!, body);
  else if (r.state === "DELIVERED" && last_status !== null) derived = { responseStatus: last_status };
  return { ...rest, details: typeof derived === "string" ? derived : JSON.stringify(derived) };
}

/** CREATED details for the page's other entries, from the rows that derive them. */
export const createdOfRows = (
  rows: readonly { message_id: string; spec: string; body: Buffer | null }[],
): { message_id: string; details: string }[] =>
  rows.map((r) => ({ message_id: r.message_id, details: derivedCreatedDetails(r.spec, r.body) }));
