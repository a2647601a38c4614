import type { Message, NewMessage } from "../../domain/message.js";
import { LIVE_ROW_SQL } from "../derived-log.js";
import {
  holdsSlotAfterFinish,
  inQueue,
  queueSlotCount,
  queuesOf as queueKeysOf,
  retryWaitsQueued,
} from "../../domain/queue-slots.js";
import { type QueueRow, queueFromRow } from "../rows-shared.js";
import type { QueueQueries } from "../adapter-parts.js";
import type { PgContext, Tx } from "./context.js";
import { arrayRows } from "./rows.js";

/**
 * FIFO queues on PostgreSQL, with several nodes sharing the database. The rules are src/domain/queue-slots.ts, as
 * on SQLite: the slots of a queue are its first `parallelism` unfinished messages by arrival (`seq`), a paused queue
 * has none; only messages in a slot are CREATED/RETRY (claimable), the others wait QUEUED; a message keeps its slot
 * while ACTIVE, in RETRY backoff and, when it produced callbacks, as HELD until the last one finished. "Promotion"
 * turns the QUEUED rows inside the slots into CREATED (RETRY when already attempted).
 *
 * What SQLite's single writer gave for free is a lock here. Every transaction that changes a queue's set of
 * unfinished rows, or its parallelism/pause, holds the queue's row lock (`SELECT … FROM queues … FOR UPDATE`) while
 * it counts and promotes, until COMMIT. So two nodes finishing messages of one queue at once take turns: the second
 * one's promotion (a new statement, so a new READ COMMITTED snapshot) sees the first one's commit and cannot promote
 * into the slot the first one just filled.
 * - Inserts lock the queue BEFORE inserting their rows: `seq` is drawn at insert, so rows of one queue get their
 *   seq in commit order. Locking after the insert would let a later seq commit, be promoted and be delivered while an
 *   earlier seq was still invisible: FIFO broken, and once the earlier row shows up the queue exceeds parallelism.
 * - Removals (finish, cancel, a HELD parent released) may lock after removing: a concurrent promoter that still
 *   sees the removed row only promotes less; the remover promotes itself once it holds the lock.
 * - Releasing a HELD parent locks the parent row first: two nodes finishing its last two callbacks at once would each
 *   still see the other's callback and neither would release it. With the lock, the second one re-reads after the
 *   first one's commit.
 *
 * Lock order, to avoid deadlocks: queue rows (several at once: sorted by account and name, in one statement) before
 * the message rows of those queues; a finishing message's own queue before its row (the cancel takes queue locks
 * before `SELECT … FOR UPDATE` on its rows, so the two cannot wait on each other). A callback's row, then its HELD
 * parent, then the parent's queue. The write batcher retries the rare deadlock left (different operations sharing a
 * batch transaction cannot be ordered).
 */
export interface PgQueueSlots {
  /** Before inserting messages: creates their queues when missing (parallelism 1) and locks them. */
  lockForInsert(tx: Tx, messages: readonly NewMessage[], now: number): Promise<QueueLocks>;
  /** After inserting: promotes the head of every queue locked for the insert. */
  promoteAfterInsert(tx: Tx, locks: QueueLocks, now: number): Promise<void>;
  /**
   * Before recording an attempt's outcome: locks the message's queue and says whether the row, once finished, must
   * stay as HELD (a queue message with callbacks still to finish) instead of ending (kept or deleted: messages.ts).
   */
  beforeFinish(tx: Tx, m: Message, newMessages: readonly NewMessage[]): Promise<FinishPlan>;
  /** After the outcome was recorded: a retry in a paused queue waits QUEUED; a removal frees slots and promotes. */
  afterFinish(tx: Tx, m: Message, removed: boolean, plan: FinishPlan, now: number): Promise<void>;
  /** Before a cancel selects its rows FOR UPDATE: locks the queues of the rows `fromWhere` matches. */
  lockForCancel(tx: Tx, fromWhere: string, values: readonly unknown[]): Promise<void>;
  /** Takes cancelled (not in flight) rows out: ended (kept or deleted) or HELD; then releases parents, promotes. */
  removeCancelled(tx: Tx, messages: readonly Message[], now: number): Promise<void>;
  /** Re-applies the slots after a change of parallelism or pause (queue locked): demotes outside, promotes inside. */
  rebalance(tx: Tx, accountId: string, queueName: string, now: number): Promise<void>;
}

/** Queues locked for an insert, with their slot count. */
export type QueueLocks = Map<string, QueueSlot>;

interface QueueSlot {
  accountId: string;
  queueName: string;
  slots: number;
}

export interface FinishPlan {
  hold: boolean;
  /** Slots of the message's queue, read under its lock; undefined when the message is not in a queue. */
  slots?: number;
}

const keyOf = (accountId: string, queueName: string) => `${accountId}\u0000${queueName}`;

/** A queue's identity as parallel arrays (arrayRows). */
const QUEUE_KEY_COLUMNS = [
  ["a", "text"],
  ["n", "text"],
] as const;
/** Locks several queues in one statement, in a fixed order (bytewise account, then name) on every node. */
const lockQueuesSql = {
  name: "ferry_queue_lock_many",
  text: `SELECT account_id, name, parallelism, paused FROM queues
    WHERE (account_id, name) IN (SELECT * FROM ${arrayRows("w", QUEUE_KEY_COLUMNS)})
    ORDER BY account_id COLLATE "C", name COLLATE "C" FOR UPDATE`,
};
const createDefaultsSql = {
  name: "ferry_queue_create_defaults",
  text: `INSERT INTO queues (account_id, name, parallelism, paused, created_at, updated_at)
    SELECT a, n, 1, FALSE, $3, $3 FROM ${arrayRows("w", QUEUE_KEY_COLUMNS)}
    ORDER BY a COLLATE "C", n COLLATE "C"
    ON CONFLICT (account_id, name) DO NOTHING`,
};
/** The finishing message's queue, locked, and whether the message has callbacks in the table: one round trip. */
const finishLockSql = {
  name: "ferry_queue_lock_finish",
  text: `WITH q AS (SELECT parallelism, paused FROM queues WHERE account_id = $1 AND name = $2 FOR UPDATE)
    SELECT (SELECT parallelism FROM q) AS parallelism, (SELECT paused FROM q) AS paused,
      EXISTS (SELECT 1 FROM messages WHERE parent_id = $3 AND parent_id IS NOT NULL AND ${LIVE_ROW_SQL})
        AS has_children`,
};
// Live rows only (messages_queue carries the same condition): a kept row has no slot (docs/states.md).
const HEAD = `SELECT seq FROM messages WHERE account_id = $1 AND queue_name = $2 AND kind = 'message'
  AND queue_name IS NOT NULL AND ${LIVE_ROW_SQL} ORDER BY seq LIMIT $3`;
const promoteSql = {
  name: "ferry_queue_promote",
  text: `UPDATE messages SET state = CASE WHEN retried > 0 THEN 'RETRY' ELSE 'CREATED' END
    WHERE state = 'QUEUED' AND seq IN (${HEAD}) RETURNING due_at`,
};
const demoteSql = {
  name: "ferry_queue_demote",
  text: `UPDATE messages SET state = 'QUEUED'
    WHERE account_id = $1 AND queue_name = $2 AND kind = 'message' AND state IN ('CREATED', 'RETRY')
      AND seq NOT IN (${HEAD})`,
};
const toQueuedSql = {
  name: "ferry_queue_retry_paused",
  text: "UPDATE messages SET state = 'QUEUED' WHERE id = $1 AND state = 'RETRY'",
};
const lockParentsSql = {
  name: "ferry_queue_lock_parents",
  text: "SELECT id FROM messages WHERE id = ANY($1::text[]) AND state = 'HELD' ORDER BY seq FOR UPDATE",
};
const NO_LIVE_CHILD = `NOT EXISTS (SELECT 1 FROM messages c WHERE c.parent_id = p.id AND c.parent_id IS NOT NULL
  AND c.${LIVE_ROW_SQL})`;
/** A released parent that derives its log ends as its outcome and stays (docs/states.md "The message row"). */
const releaseParentsSql = {
  name: "ferry_queue_release_parents",
  text: `WITH ended AS (
      UPDATE messages p SET state = COALESCE(p.outcome, 'CANCELED')
      WHERE id = ANY($1::text[]) AND state = 'HELD' AND derived_log AND ${NO_LIVE_CHILD}
      RETURNING account_id, kind, queue_name),
    gone AS (
      DELETE FROM messages p WHERE id = ANY($1::text[]) AND state = 'HELD' AND NOT derived_log AND ${NO_LIVE_CHILD}
      RETURNING account_id, kind, queue_name)
    SELECT * FROM ended UNION ALL SELECT * FROM gone`,
};

export function queueSlots(ctx: PgContext): PgQueueSlots {
  /** Locks the queues (creating missing ones first when asked) and returns their slot counts. */
  const lockQueues = async (tx: Tx, wanted: QueueLocks, now: number, createMissing: boolean) => {
    if (wanted.size === 0) return wanted;
    const keys = [...wanted.values()];
    const arrays = [keys.map((k) => k.accountId), keys.map((k) => k.queueName)];
    type Row = { account_id: string; name: string; parallelism: number; paused: boolean };
    let rows = await tx.query<Row>(lockQueuesSql, arrays);
    if (createMissing && rows.length < keys.length) {
      await tx.execute(createDefaultsSql, [...arrays, now]);
      rows = await tx.query<Row>(lockQueuesSql, arrays);
    }
    const found = new Map(rows.map((r) => [keyOf(r.account_id, r.name), r]));
    for (const [key, slot] of wanted) slot.slots = queueSlotCount(found.get(key));
    return wanted;
  };

  const promote = async (tx: Tx, q: QueueSlot, now: number) => {
    if (q.slots <= 0) return;
    const promoted = await tx.query<{ due_at: number }>(promoteSql, [q.accountId, q.queueName, q.slots]);
    if (promoted.some((r) => ctx.wakesOthers(r.due_at, now))) tx.notifyDue();
  };

  /** Deletes HELD parents whose last callback is gone, then frees their slots. */
  const releaseParents = async (tx: Tx, parentIds: string[], now: number) => {
    if (parentIds.length === 0) return;
    if ((await tx.query(lockParentsSql, [parentIds])).length === 0) return;
    const released = await tx.query<{ account_id: string; kind: string; queue_name: string | null }>(
      releaseParentsSql,
      [parentIds],
    );
    const freed: QueueLocks = new Map();
    for (const p of released) {
      if (p.kind !== "message" || p.queue_name === null) continue;
      freed.set(keyOf(p.account_id, p.queue_name), { accountId: p.account_id, queueName: p.queue_name, slots: 0 });
    }
    await lockQueues(tx, freed, now, false);
    for (const q of freed.values()) await promote(tx, q, now);
  };

  const queuesOf = (messages: readonly Pick<Message, "kind" | "queueName" | "accountId">[]): QueueLocks =>
    new Map([...queueKeysOf(messages)].map(([key, q]) => [key, { ...q, slots: 0 }]));

  return {
    lockForInsert: (tx, messages, now) => lockQueues(tx, queuesOf(messages), now, true),

    async promoteAfterInsert(tx, locks, now) {
      for (const q of locks.values()) await promote(tx, q, now);
    },

    async beforeFinish(tx, m, newMessages) {
      if (!inQueue(m)) return { hold: false };
      const [row] = await tx.query<{ parallelism: number | null; paused: boolean | null; has_children: boolean }>(
        finishLockSql,
        [m.accountId, m.queueName, m.id],
      );
      const hold = holdsSlotAfterFinish(m, { created: newMessages, stored: row!.has_children });
      return { hold, slots: queueSlotCount(row) };
    },

    async afterFinish(tx, m, removed, plan, now) {
      if (!removed) {
        if (plan.slots !== undefined && retryWaitsQueued(m, plan.slots)) await tx.execute(toQueuedSql, [m.id]);
        return;
      }
      if (m.parentId !== undefined) await releaseParents(tx, [m.parentId], now);
      // A HELD message keeps its slot: nothing to promote until its callbacks finish.
      if (inQueue(m) && !plan.hold) {
        await promote(tx, { accountId: m.accountId, queueName: m.queueName, slots: plan.slots ?? 1 }, now);
      }
    },

    async lockForCancel(tx, fromWhere, values) {
      await tx.query(
        `SELECT 1 FROM queues WHERE (account_id, name) IN (
           SELECT DISTINCT account_id, queue_name ${fromWhere} AND queue_name IS NOT NULL AND kind = 'message')
         ORDER BY account_id COLLATE "C", name COLLATE "C" FOR UPDATE`,
        [...values],
      );
    },

    async removeCancelled(tx, messages, now) {
      if (messages.length === 0) return;
      const queued = messages.filter(inQueue).map((m) => m.id);
      const held = new Set<string>();
      if (queued.length > 0) {
        const rows = await tx.query<{ id: string }>(
          `UPDATE messages m SET state = 'HELD', lease_owner = NULL, lease_until = NULL
           WHERE id = ANY($1::text[]) AND EXISTS (SELECT 1 FROM messages c WHERE c.parent_id = m.id
             AND c.parent_id IS NOT NULL AND c.${LIVE_ROW_SQL}) RETURNING id`,
          [queued],
        );
        for (const r of rows) held.add(r.id);
      }
      const gone = messages.filter((m) => !held.has(m.id));
      // Rows that derive their log end as CANCELED and stay; the others go (docs/states.md "The message row").
      const goneIds = gone.map((m) => m.id);
      await tx.execute(
        `UPDATE messages SET state = 'CANCELED', lease_owner = NULL, lease_until = NULL
         WHERE id = ANY($1::text[]) AND derived_log`,
        [goneIds],
      );
      await tx.execute("DELETE FROM messages WHERE id = ANY($1::text[]) AND NOT derived_log", [goneIds]);
      const parents = [...new Set(gone.flatMap((m) => (m.parentId !== undefined ? [m.parentId] : [])))];
      await releaseParents(tx, parents, now);
      const freed = await lockQueues(tx, queuesOf(gone), now, false);
      for (const q of freed.values()) await promote(tx, q, now);
    },

    async rebalance(tx, accountId, queueName, now) {
      const wanted: QueueLocks = new Map([[keyOf(accountId, queueName), { accountId, queueName, slots: 0 }]]);
      const [q] = (await lockQueues(tx, wanted, now, false)).values();
      await tx.execute(demoteSql, [accountId, queueName, q!.slots]);
      await promote(tx, q!, now);
    },
  };
}

const SELECT_QUEUE = `SELECT q.name, q.parallelism, q.paused, q.created_at, q.updated_at,
    (SELECT COUNT(*) FROM messages m WHERE m.account_id = q.account_id AND m.queue_name = q.name
       AND m.kind = 'message' AND m.state <> 'HELD' AND m.queue_name IS NOT NULL AND m.${LIVE_ROW_SQL}) AS lag
  FROM queues q`;

/**
 * Advisory lock namespace (first key of pg_advisory_xact_lock(int4, int4)) of queue creation in an account; the
 * second key is hashtext(account id). Creations of one account take turns, so max_queues is counted with nobody
 * adding meanwhile (two nodes creating the last allowed queue at once: one gets max_queues). Publishes to existing
 * queues never take it.
 */
const QUEUE_CREATE_LOCK = 7_262_003;

export function queueQueries(ctx: PgContext): QueueQueries {
  const slots = queueSlots(ctx);

  const lockCreation = (tx: Tx, accountId: string) =>
    tx.query({ name: "ferry_queue_create_lock", text: "SELECT pg_advisory_xact_lock($1, hashtext($2))" }, [
      QUEUE_CREATE_LOCK,
      accountId,
    ]);
  /** How many queues the account has and whether `name` is one of them, read under the creation lock. */
  const census = async (tx: Tx, accountId: string, name: string) => {
    const [row] = await tx.query<{ n: number; present: boolean }>(
      {
        name: "ferry_queue_census",
        text: `SELECT COUNT(*) AS n, COALESCE(bool_or(name = $2), FALSE) AS present FROM queues
          WHERE account_id = $1`,
      },
      [accountId, name],
    );
    return row!;
  };

  return {
    queueUpsert: ({ accountId, name, parallelism, paused, now, maxQueues }) =>
      ctx.write(async (tx) => {
        await lockCreation(tx, accountId);
        const { n, present } = await census(tx, accountId, name);
        if (!present && n >= maxQueues) return "max_queues";
        // An upsert: the insert hook may create the queue (as a default) meanwhile; this then updates it.
        const [row] = await tx.query<{ created: boolean }>(
          `INSERT INTO queues (account_id, name, parallelism, paused, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $5)
           ON CONFLICT (account_id, name) DO UPDATE SET parallelism = excluded.parallelism, paused = excluded.paused,
             updated_at = excluded.updated_at
           RETURNING (xmax = 0) AS created`,
          [accountId, name, parallelism, paused, now],
        );
        await slots.rebalance(tx, accountId, name, now);
        return row!.created ? "created" : "updated";
      }),

    queueEnsure: async ({ accountId, name, now, maxQueues }) => {
      // Every enqueue asks: answered by a read while the queue exists (a delete racing with it is harmless: the
      // insert recreates the queue with the defaults, as on SQLite).
      const found = await ctx.query(
        { name: "ferry_queue_exists", text: "SELECT 1 FROM queues WHERE account_id = $1 AND name = $2" },
        [accountId, name],
      );
      if (found.length > 0) return "exists";
      return ctx.write(async (tx) => {
        await lockCreation(tx, accountId);
        const { n, present } = await census(tx, accountId, name);
        if (present) return "exists";
        if (n >= maxQueues) return "max_queues";
        const created = await tx.execute(
          `INSERT INTO queues (account_id, name, parallelism, paused, created_at, updated_at)
           VALUES ($1, $2, 1, FALSE, $3, $3) ON CONFLICT (account_id, name) DO NOTHING`,
          [accountId, name, now],
        );
        return created > 0 ? "created" : "exists";
      });
    },

    queueGet: async ({ accountId, name }) => {
      const [row] = await ctx.query<QueueRow<boolean>>(`${SELECT_QUEUE} WHERE q.account_id = $1 AND q.name = $2`, [
        accountId,
        name,
      ]);
      return row ? queueFromRow(row) : undefined;
    },

    // Byte-wise name order (COLLATE "C"), like SQLite, whatever the database's collation.
    queueList: async ({ accountId }) => {
      const rows = await ctx.query<QueueRow<boolean>>(`${SELECT_QUEUE} WHERE q.account_id = $1 ORDER BY q.name COLLATE "C"`, [
        accountId,
      ]);
      return rows.map(queueFromRow);
    },

    queueDelete: ({ accountId, name }) =>
      ctx.write(async (tx) => {
        const deleted = await tx.execute("DELETE FROM queues WHERE account_id = $1 AND name = $2", [accountId, name]);
        return deleted > 0;
      }),

    queueSetPaused: ({ accountId, name, paused, now }) =>
      ctx.write(async (tx) => {
        // The UPDATE locks the queue row; rebalance runs under that lock.
        const changed = await tx.execute(
          "UPDATE queues SET paused = $1, updated_at = $2 WHERE account_id = $3 AND name = $4",
          [paused, now, accountId, name],
        );
        if (changed === 0) return false;
        await slots.rebalance(tx, accountId, name, now);
        return true;
      }),
  };
}
