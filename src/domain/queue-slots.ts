import type { Message, MessageState, NewMessage } from "./message.js";

/**
 * Where a FIFO queue slot is taken, kept or freed (docs/queues.md): the rules, once for both storage adapters. The
 * adapters (src/store/sqlite/queues.ts, src/store/postgres/queues.ts) lock, load and apply them with their own SQL;
 * nothing here does I/O.
 *
 * The slots of a queue are its first `parallelism` unfinished messages by arrival (`seq`); a paused queue has none.
 * Only messages in a slot may be attempted (CREATED, or RETRY when already attempted); the others wait QUEUED, which
 * the claim never looks at. A message keeps its slot while ACTIVE, in RETRY backoff, and, when it produced callbacks,
 * as HELD until its last callback finished (docs/callbacks.md). Only ordinary messages (kind `message`) take part:
 * callbacks are never queued.
 */

/** The part of a message the queue rules look at. */
export type QueueMember = Pick<Message, "kind" | "queueName">;

/** Whether the message takes part in a FIFO queue. */
export const inQueue = <M extends QueueMember>(m: M): m is M & { queueName: string } =>
  m.kind === "message" && m.queueName !== undefined;

/** A queue's configuration as stored; flags are 0/1 in SQLite, booleans in PostgreSQL. */
export interface QueueConfig {
  parallelism: number | null;
  paused: boolean | number | null;
}

/**
 * How many slots a queue has: none while paused. A queue without a record (deleted while messages remained)
 * behaves as the default: parallelism 1, running.
 */
export function queueSlotCount(q: QueueConfig | undefined): number {
  if (!q || q.parallelism === null) return 1;
  return q.paused ? 0 : q.parallelism;
}

/** The state a queued message takes when it gets a slot: RETRY when it was already attempted, else CREATED. */
export const promotedState = (retried: number): MessageState => (retried > 0 ? "RETRY" : "CREATED");

/** A queue's unfinished message, in arrival order, as the slot rules see it. */
export interface QueueRow {
  seq: number;
  state: MessageState;
  retried: number;
}

/**
 * Re-applying the slots (after an insert, a finish, a pause or a change of parallelism): the QUEUED rows among the
 * first `slots` rows are promoted; the claimable rows (CREATED, RETRY) outside them are demoted to QUEUED. Rows in
 * flight (ACTIVE) and HELD rows keep their place, and so their slot. `rows` are the queue's unfinished messages in
 * arrival order. The adapters apply this with one UPDATE each (`promote` and `demote`).
 */
export function slotMoves(rows: readonly QueueRow[], slots: number): { promote: QueueRow[]; demote: QueueRow[] } {
  const inSlots = rows.slice(0, Math.max(0, slots));
  const outside = rows.slice(Math.max(0, slots));
  return {
    promote: inSlots.filter((r) => r.state === "QUEUED"),
    demote: outside.filter((r) => r.state === "CREATED" || r.state === "RETRY"),
  };
}

/**
 * A finished message (delivered, failed or cancelled) leaves the live rows (its row kept as its outcome when it
 * derives its log, docs/states.md "The message row"), except a queue message with callbacks still to finish (created by this very outcome, or already stored): it stays HELD and keeps its slot. `stored` is asked
 * only when the answer depends on it (SQLite reads it then; PostgreSQL already has it from its lock statement).
 */
export function holdsSlotAfterFinish(
  m: QueueMember & Pick<Message, "id">,
  children: { created: readonly Pick<NewMessage, "parentId">[]; stored: boolean | (() => boolean) },
): boolean {
  if (!inQueue(m)) return false;
  if (children.created.some((n) => n.parentId === m.id)) return true;
  return typeof children.stored === "function" ? children.stored() : children.stored;
}

/** A message going back to RETRY keeps its slot, but waits QUEUED while its queue is paused (no slots). */
export const retryWaitsQueued = (m: QueueMember, slots: number): boolean => inQueue(m) && slots === 0;

/** A HELD parent leaves the table (and frees its slot) once its last callback is gone. */
export const parentReleasable = (parent: { state: string } | undefined, children: number): boolean =>
  parent?.state === "HELD" && children === 0;

/** The queues a set of messages belongs to, each once, keyed by account and name. */
export function queuesOf(
  messages: readonly Pick<Message, "kind" | "queueName" | "accountId">[],
): Map<string, { accountId: string; queueName: string }> {
  const out = new Map<string, { accountId: string; queueName: string }>();
  for (const m of messages) {
    if (inQueue(m)) out.set(`${m.accountId}\u0000${m.queueName}`, { accountId: m.accountId, queueName: m.queueName });
  }
  return out;
}
