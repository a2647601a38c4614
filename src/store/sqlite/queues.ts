import type { Message, NewMessage } from "../../domain/message.js";
import {
  holdsSlotAfterFinish,
  inQueue,
  parentReleasable,
  queueSlotCount,
  queuesOf,
  retryWaitsQueued,
} from "../../domain/queue-slots.js";
import { type QueueRow, queueFromRow } from "../rows-shared.js";
import type { QueueQueries } from "../adapter-parts.js";
import type { InsertResult } from "../store.js";
import type { SqliteContext } from "./context.js";
import { LIVE_ROW, liveRowOf } from "./row-states.js";

/**
 * FIFO queues on SQLite, kept in the store so the rule holds with several nodes on one database. The rules (which
 * rows hold a slot, when a finished row stays HELD, what promotion does) are src/domain/queue-slots.ts; this file
 * loads and applies them. Promotion runs in the same transaction as every write that can free or add a slot.
 *
 * PostgreSQL note: promotions of one queue must serialise; the adapter locks the queue row (`SELECT … FOR UPDATE`)
 * first. SQLite's single writer connection gives the same guarantee.
 */
export interface QueueSlots {
  /** After an insert: creates the queues that do not exist yet (parallelism 1) and promotes each touched queue. */
  afterInsert(results: InsertResult[], now: number): void;
  /**
   * Takes a finished row (delivered, failed or cancelled) out of the live rows: ended as its outcome and kept when it
   * derives its log (docs/states.md "The message row"), else deleted; or HELD when it is a queue message with
   * callbacks still to finish. Then releases a HELD parent whose last callback this was, and promotes.
   */
  release(m: Message, newMessages: readonly NewMessage[]): void;
  /** After a retry outcome: the message keeps its slot, but waits as QUEUED while its queue is paused. */
  retrying(m: Message): void;
  /** Re-applies the slots after a change of parallelism or pause: demotes rows outside them, promotes inside. */
  rebalance(accountId: string, queueName: string): void;
}

export function queueSlots(ctx: SqliteContext): QueueSlots {
  const { db } = ctx;
  const config = db.prepare("SELECT parallelism, paused FROM queues WHERE account_id = ? AND name = ?");
  const createDefault = db.prepare(
    `INSERT INTO queues (account_id, name, parallelism, paused, created_at, updated_at) VALUES (?, ?, 1, 0, ?, ?)
     ON CONFLICT (account_id, name) DO NOTHING`,
  );
  // Live rows only (messages_queue carries the same condition): a kept row has no slot (docs/states.md).
  const head = `SELECT seq FROM messages WHERE account_id = @accountId AND queue_name = @queueName AND kind = 'message'
    AND queue_name IS NOT NULL AND ${LIVE_ROW} ORDER BY seq LIMIT @slots`;
  const promote = db.prepare(
    `UPDATE messages SET state = CASE WHEN retried > 0 THEN 'RETRY' ELSE 'CREATED' END
     WHERE state = 'QUEUED' AND seq IN (${head})`,
  );
  const demote = db.prepare(
    `UPDATE messages SET state = 'QUEUED'
     WHERE account_id = @accountId AND queue_name = @queueName AND kind = 'message' AND state IN ('CREATED', 'RETRY')
       AND seq NOT IN (${head})`,
  );
  const toQueued = db.prepare("UPDATE messages SET state = 'QUEUED' WHERE id = ? AND state = 'RETRY'");
  // A row that derives its log ends as its outcome and stays (docs/states.md "The message row"); any other goes.
  const endKept = db.prepare(
    `UPDATE messages SET state = COALESCE(outcome, 'CANCELED'), lease_owner = NULL, lease_until = NULL
     WHERE id = ? AND derived_log = 1`,
  );
  const removeRow = db.prepare("DELETE FROM messages WHERE id = ? AND derived_log = 0");
  const endRow = (id: string) => {
    if (endKept.run(id).changes === 0) removeRow.run(id);
  };
  const hold = db.prepare("UPDATE messages SET state = 'HELD', lease_owner = NULL, lease_until = NULL WHERE id = ?");
  const childCount = db.prepare(
    `SELECT COUNT(*) AS n FROM messages WHERE parent_id = ? AND parent_id IS NOT NULL AND ${LIVE_ROW}`,
  );
  const parentOf = db.prepare(`SELECT account_id, kind, state, queue_name FROM messages WHERE id = ? AND ${LIVE_ROW}`);

  const slotsOf = (accountId: string, queueName: string): number =>
    queueSlotCount(config.get(accountId, queueName) as { parallelism: number; paused: number } | undefined);

  const promoteQueue = (accountId: string, queueName: string) => {
    const slots = slotsOf(accountId, queueName);
    if (slots > 0) promote.run({ accountId, queueName, slots });
  };

  /** Deletes a HELD parent once its last callback is gone, then frees its slot; walks up a chain of parents. */
  const releaseParent = (parentId: string) => {
    const parent = parentOf.get(parentId) as
      | { account_id: string; kind: string; state: string; queue_name: string | null }
      | undefined;
    if (!parent || !parentReleasable(parent, (childCount.get(parentId) as { n: number }).n)) return;
    endRow(parentId);
    if (parent.kind === "message" && parent.queue_name !== null) promoteQueue(parent.account_id, parent.queue_name);
  };

  return {
    afterInsert(results, now) {
      const touched = queuesOf(results.flatMap((r) => (r.message ? [r.message] : [])));
      for (const { accountId, queueName } of touched.values()) {
        createDefault.run(accountId, queueName, now, now);
        promoteQueue(accountId, queueName);
      }
    },

    release(m, newMessages) {
      const holds = holdsSlotAfterFinish(m, {
        created: newMessages,
        stored: () => (childCount.get(m.id) as { n: number }).n > 0,
      });
      if (holds) hold.run(m.id);
      else endRow(m.id);
      if (m.parentId !== undefined) releaseParent(m.parentId);
      if (inQueue(m)) promoteQueue(m.accountId, m.queueName);
    },

    retrying(m) {
      if (inQueue(m) && retryWaitsQueued(m, slotsOf(m.accountId, m.queueName))) toQueued.run(m.id);
    },

    rebalance(accountId, queueName) {
      const slots = slotsOf(accountId, queueName);
      demote.run({ accountId, queueName, slots });
      if (slots > 0) promote.run({ accountId, queueName, slots });
    },
  };
}

export function queueQueries(ctx: SqliteContext): QueueQueries {
  const { db } = ctx;
  const slots = queueSlots(ctx);
  const select = `SELECT q.name, q.parallelism, q.paused, q.created_at, q.updated_at,
      (SELECT COUNT(*) FROM messages m WHERE m.account_id = q.account_id AND m.queue_name = q.name
         AND m.kind = 'message' AND m.state != 'HELD' AND m.queue_name IS NOT NULL AND ${liveRowOf("m")}) AS lag
    FROM queues q`;
  const getQueue = db.prepare(`${select} WHERE q.account_id = ? AND q.name = ?`);
  const listQueues = db.prepare(`${select} WHERE q.account_id = ? ORDER BY q.name`);
  const exists = db.prepare("SELECT 1 FROM queues WHERE account_id = ? AND name = ?");
  const count = db.prepare("SELECT COUNT(*) AS n FROM queues WHERE account_id = ?");
  const insert = db.prepare(
    `INSERT INTO queues (account_id, name, parallelism, paused, created_at, updated_at)
     VALUES (@accountId, @name, @parallelism, @paused, @now, @now)`,
  );
  const update = db.prepare(
    `UPDATE queues SET parallelism = @parallelism, paused = @paused, updated_at = @now
     WHERE account_id = @accountId AND name = @name`,
  );
  const setPaused = db.prepare("UPDATE queues SET paused = ?, updated_at = ? WHERE account_id = ? AND name = ?");
  const remove = db.prepare("DELETE FROM queues WHERE account_id = ? AND name = ?");

  const atLimit = (accountId: string, maxQueues: number) => (count.get(accountId) as { n: number }).n >= maxQueues;

  return {
    queueUpsert: ({ accountId, name, parallelism, paused, now, maxQueues }) =>
      ctx.write(() => {
        const params = { accountId, name, parallelism, paused: paused ? 1 : 0, now };
        let result: "created" | "updated";
        if (exists.get(accountId, name)) {
          update.run(params);
          result = "updated";
        } else {
          if (atLimit(accountId, maxQueues)) return "max_queues";
          insert.run(params);
          result = "created";
        }
        slots.rebalance(accountId, name);
        return result;
      }),

    queueEnsure: ({ accountId, name, now, maxQueues }) =>
      ctx.write(() => {
        if (exists.get(accountId, name)) return "exists";
        if (atLimit(accountId, maxQueues)) return "max_queues";
        insert.run({ accountId, name, parallelism: 1, paused: 0, now });
        return "created";
      }),

    queueGet: async ({ accountId, name }) => {
      const row = getQueue.get(accountId, name) as QueueRow<number> | undefined;
      return row ? queueFromRow(row) : undefined;
    },

    queueList: async ({ accountId }) => (listQueues.all(accountId) as QueueRow<number>[]).map(queueFromRow),

    queueDelete: ({ accountId, name }) => ctx.write(() => remove.run(accountId, name).changes > 0),

    queueSetPaused: ({ accountId, name, paused, now }) =>
      ctx.write(() => {
        if (setPaused.run(paused ? 1 : 0, now, accountId, name).changes === 0) return false;
        slots.rebalance(accountId, name);
        return true;
      }),
  };
}
