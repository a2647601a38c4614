import type { FilterColumns } from "../domain/log.js";
import type { EndedState, MessageKind, MessageState } from "../domain/message.js";
import type { MessageListState } from "../domain/message-list-state.js";
import { type FilterColumnsRow, filterColumnsFromRow } from "./rows-shared.js";
import { seqPage } from "./pages.js";
import type { MessageFilter, Order } from "./store-params.js";

/**
 * One row per message with its current state, read straight from the message row (docs/states.md "The message
 * row"): what a list of messages (rather than of log entries) shows, paged by message. Merged into `Store`; both
 * adapters implement it (`message-rows.ts`). Rows from before migration 060 and rows of messages with
 * Svc-Redact-Fields leave the table when they end, so only their live part is here.
 */
export interface MessageRowRecord extends FilterColumns {
  id: string;
  accountId: string;
  kind: MessageKind;
  parentId?: string;
  /** The row's state: a live one (QUEUED: behind its FIFO queue; WAITING: held by flow control), or how it ended. */
  state: MessageState | EndedState;
  /** WAITING: `key` (its flow-control key's limits) or `global` (the account's max_global_parallelism). */
  waitReason?: string;
  /** A finished row (ended, or HELD for its callbacks): how it ended. */
  outcome?: EndedState;
  createdAt: number;
  /** When its next attempt is due (live rows: CREATED, RETRY; for a delayed message, its delay). */
  dueAt: number;
  firstLeasedAt?: number;
  finishedAt?: number;
  attempts: number;
  /** The destination's status of the last attempt. */
  lastStatus?: number;
  /** The body's size in bytes: the list never carries bodies (`messageGet` does, for live rows). */
  bodySize: number;
  /** A cancel was asked for while an attempt was in flight: it ends CANCELED when the attempt ends. */
  cancelRequested: boolean;
}

export interface MessageRowFilter extends MessageFilter {
  /** The row's states (live or ended), as in `MessageRowRecord.state`. */
  state?: string[];
  /**
   * The states a list of messages shows (src/domain/message-list-state.ts), any of them; DELAYED and CREATED need
   * the list's `now`.
   */
  listState?: MessageListState[];
}

export interface MessageRowStore {
  /** The account's message rows by arrival (`seq`), `count` at most, after `cursor` (the `cursor` of the last page). */
  messageRowList(p: {
    accountId: string;
    filter: MessageRowFilter;
    cursor?: string;
    count: number;
    order: Order;
    /** The time `listState` reads a delay against (a created row due later is DELAYED). */
    now: number;
  }): Promise<{ rows: MessageRowRecord[]; cursor?: string }>;
}

/** The columns the list reads (no body); `body_size` is the dialect's length of the body. */
export const MESSAGE_ROW_COLUMNS = `seq, id, account_id, kind, parent_id, url, topic_name, endpoint_name, queue_name,
  schedule_id, caller_ip, labels, flow_key, state, wait_reason, outcome, created_at, due_at, first_leased_at,
  finished_at, attempts, last_status, cancel_requested`;

export interface MessageRowRow extends FilterColumnsRow {
  seq: number | string;
  id: string;
  account_id: string;
  kind: string;
  parent_id: string | null;
  state: string;
  wait_reason: string | null;
  outcome: string | null;
  created_at: number;
  due_at: number;
  first_leased_at: number | null;
  finished_at: number | null;
  attempts: number;
  last_status: number | null;
  body_size: number | null;
  /** 0/1 in SQLite, a boolean in PostgreSQL. */
  cancel_requested: number | boolean;
}

export function messageRowFromRow(r: MessageRowRow): MessageRowRecord {
  const m: MessageRowRecord = {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind as MessageKind,
    url: r.url,
    state: r.state as MessageRowRecord["state"],
    createdAt: r.created_at,
    dueAt: r.due_at,
    attempts: r.attempts,
    bodySize: r.body_size ?? 0,
    cancelRequested: r.cancel_requested === true || r.cancel_requested === 1,
  };
  if (r.parent_id !== null) m.parentId = r.parent_id;
  filterColumnsFromRow(r, m);
  if (r.wait_reason !== null) m.waitReason = r.wait_reason;
  if (r.outcome !== null) m.outcome = r.outcome as EndedState;
  if (r.first_leased_at !== null) m.firstLeasedAt = r.first_leased_at;
  if (r.finished_at !== null) m.finishedAt = r.finished_at;
  if (r.last_status !== null) m.lastStatus = r.last_status;
  return m;
}

/** A page of rows read with one more than `count`: the rows, and the cursor when there is a next page. */
export function messageRowPage(
  rows: readonly MessageRowRow[],
  count: number,
): { rows: MessageRowRecord[]; cursor?: string } {
  const { page, cursor } = seqPage(rows, count);
  const records = page.map(messageRowFromRow);
  return cursor === undefined ? { rows: records } : { rows: records, cursor };
}
