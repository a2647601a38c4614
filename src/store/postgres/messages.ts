import { planCancel } from "../../domain/cancel-plan.js";
import { planInsert, wantsFastPath } from "../../domain/insert-plan.js";
import { logEntry } from "../../domain/log.js";
import type { Message, NewMessage } from "../../domain/message.js";
import { ENDED_STATE, type FinishRecords, isPlainDelivery, planFinishRecords } from "../../domain/finish-plan.js";
import { LIVE_ROW_SQL } from "../derived-log.js";
import type { MessageQueries } from "../adapter-parts.js";
import type { FinishParams, InsertItem, InsertResult, TokenCheck } from "../store.js";
import type { PgContext, Tx } from "./context.js";
import { andAll, filterSql, Params } from "./filters.js";
import { queueSlots } from "./queues.js";
import { flowClaim, flowNextWakeAt } from "./flow-control.js";
import { fastPathGate } from "./flow-fast-path.js";
import { KnownRoom } from "./fast-path-pipelined.js";
import { checkTokens } from "./token-check.js";
import { type ComposableStatement, composable } from "./compose.js";
import { arrayRows, type MessageRow, messageFromRow } from "./rows.js";
import { type MessageInserter, pgWorkflowWrites } from "./workflow-writes.js";

/** Rows being finished right now are locked: skipping them avoids waiting (and deadlocking) on the finisher. */
const renewSql = {
  name: "ferry_renew_leases",
  text: `UPDATE messages SET lease_until = $1
    WHERE seq IN (SELECT seq FROM messages WHERE id = ANY($3::text[]) AND state = 'ACTIVE' AND lease_owner = $2
      FOR UPDATE SKIP LOCKED)`,
};
const RELEASE_SET = `state = CASE WHEN retried > 0 THEN 'RETRY' ELSE 'CREATED' END, due_at = $1,
  lease_owner = NULL, lease_until = NULL`;
const releaseExpiredSql = `UPDATE messages SET ${RELEASE_SET}
  WHERE seq IN (SELECT seq FROM messages WHERE state = 'ACTIVE' AND lease_until < $1 FOR UPDATE SKIP LOCKED)`;
const releaseForeignSql = `UPDATE messages SET ${RELEASE_SET}
  WHERE seq IN (SELECT seq FROM messages WHERE state = 'ACTIVE' AND lease_owner IS DISTINCT FROM $2
    FOR UPDATE SKIP LOCKED)`;
/** Finishing needs the lease still held; the returned flag says whether a cancel came in meanwhile. */
const OWNED = "id = $1 AND lease_owner = $2 AND state = 'ACTIVE'";
/** A finished queue message whose callbacks are still to finish keeps its row, and its queue slot, as HELD. */
const removeOwned = (hold: boolean) =>
  hold
    ? `UPDATE messages SET state = 'HELD', lease_owner = NULL, lease_until = NULL WHERE ${OWNED}`
    : `DELETE FROM messages WHERE ${OWNED}`;
/**
 * A row that derives its log (docs/states.md "The message row") ends as its outcome and stays (or HELD, with its
 * outcome kept for when it is released): `outcome`, `now`, `status` are the placeholders of those values. A delivery
 * takes its DELIVERED entry's position in the log.
 */
const endOwned = (hold: boolean, v: { outcome: string; now: string; status: string }) =>
  `UPDATE messages SET state = ${hold ? "'HELD'" : v.outcome}, outcome = ${v.outcome}, lease_owner = NULL,
    lease_until = NULL, finished_at = ${v.now}, last_status = ${v.status}, attempts = attempts + 1,
    finished_seq = CASE WHEN ${v.outcome} = 'DELIVERED' THEN nextval('log_seq') END
  WHERE ${OWNED}`;
/** Parameters: id, owner, and for a row that derives its log: outcome, now, status. */
const deleteOwnedSql = (hold: boolean, kept: boolean) => ({
  name: `ferry_finish_${hold ? "hold" : "delete"}${kept ? "_kept" : ""}`,
  text: `${kept ? endOwned(hold, { outcome: "$3::text", now: "$4::int8", status: "$5::int4" }) : removeOwned(hold)}
    RETURNING cancel_requested`,
});
/** The earliest message due after `$1` (see messageNextDueAt): those due now were just left by the claim. */
const nextDueAfterSql = {
  name: "ferry_next_due_after",
  text: "SELECT MIN(due_at) AS due FROM messages WHERE state IN ('CREATED', 'RETRY') AND due_at > $1",
};
const retryOwnedSql = {
  name: "ferry_finish_retry",
  text: `UPDATE messages SET state = 'RETRY', due_at = $3, retried = retried + 1, lease_owner = NULL, lease_until = NULL,
      last_status = $4, attempts = attempts + 1
    WHERE ${OWNED} AND NOT cancel_requested RETURNING id`,
};
const failOwnedSql = (hold: boolean, kept: boolean) => ({
  name: `ferry_finish_fail${hold ? "_hold" : ""}${kept ? "_kept" : ""}`,
  text: `WITH gone AS (
      ${kept ? endOwned(hold, { outcome: "'FAILED'", now: "$4::int8", status: "$5::int4" }) : removeOwned(hold)}
      RETURNING *)
    INSERT INTO dlq (dlq_id, account_id, message_id, kind, parent_id, url, url_host, url_path, body, spec, created_at,
      not_before, retried, topic_name, endpoint_name, queue_name, schedule_id, caller_ip, labels, flow_key, failed_at,
      response_status, response_headers, response_body, error)
    SELECT $3, account_id, id, kind, parent_id, url, url_host, url_path, body, spec, created_at, not_before, retried,
      topic_name, endpoint_name, queue_name, schedule_id, caller_ip, labels, flow_key, $4, $5, $6, $7, $8
    FROM gone RETURNING dlq_id`,
});

/**
 * Plain deliveries: their rows go, whether or not a cancel came in meanwhile (a success counts as delivered). Each row
 * with its own lease owner: the write relay's leader finishes the deliveries of every node in one statement
 * (docs/postgres.md "The write relay").
 */
const finishDeliveredSql = {
  name: "ferry_finish_delivered_many",
  text: `DELETE FROM messages m USING ${arrayRows("u", [["id", "text"], ["owner", "text"]])}
    WHERE m.id = u.id AND m.lease_owner = u.owner AND m.state = 'ACTIVE' RETURNING m.id, u.owner`,
};
/** Plain deliveries of rows that derive their log: one UPDATE for the batch, each taking its DELIVERED position. */
const finishDeliveredKeptSql = {
  name: "ferry_finish_delivered_kept_many",
  text: `UPDATE messages m SET state = 'DELIVERED', outcome = 'DELIVERED', lease_owner = NULL, lease_until = NULL,
      finished_at = u.now, last_status = u.status, attempts = m.attempts + 1, finished_seq = nextval('log_seq')
    FROM ${arrayRows("u", [["id", "text"], ["owner", "text"], ["now", "int8"], ["status", "int4"]])}
    WHERE m.id = u.id AND m.lease_owner = u.owner AND m.state = 'ACTIVE' RETURNING m.id, u.owner`,
};
/**
 * In a pipelined run (write-batch-tx.ts, Tx.pipelined) a batch's plain deliveries are sent without waiting for the
 * rows they ended: every lease is taken to be still held (it nearly always is), and `ferry_expect` (migration 069)
 * fails the transaction when one was lost meanwhile (a rescued lease). Then the batch runs again reading which rows
 * ended. `$n`: how many rows the statement must end.
 */
const expectingAll = (sql: { name: string; text: string }, n: number) =>
  composable(
    `${sql.name}_expect`,
    [[`${sql.name}_ended`, sql.text]],
    [`(SELECT ferry_expect(count(*) = $${n}, 'a delivery''s lease') FROM ${sql.name}_ended) AS ok`],
  );
const finishDeliveredExpectSql = expectingAll(finishDeliveredSql, 3);
const finishDeliveredKeptExpectSql = expectingAll(finishDeliveredKeptSql, 5);
/** The first lease of rows that derive their log is stamped on them (docs/states.md "The message row"). */
const firstLeaseSql = {
  name: "ferry_first_lease",
  text: `UPDATE messages m SET first_leased_at = $2, active_seq = nextval('log_seq')
    FROM ${arrayRows("u", [["id", "text"]])} WHERE m.id = u.id AND m.first_leased_at IS NULL`,
};
/** Cancelled rows that derive their log record how they ended before they leave the live set (queues.ts). */
const stampCanceledSql = {
  name: "ferry_cancel_stamp",
  text: "UPDATE messages SET outcome = 'CANCELED', finished_at = $2 WHERE id = ANY($1::text[]) AND derived_log",
};

/** One publish call's items, with its own clock and deduplication window. */
export interface InsertCall {
  items: InsertItem[];
  now: number;
  dedupWindowMs: number;
  tokenCheck?: TokenCheck;
}

export function messageInserter(ctx: PgContext): MessageInserter {
  return messageInserters(ctx).insertNew;
}

/**
 * Below this many free slots of its max_global_parallelism, an account's deliveries' outcomes commit at once instead
 * of riding along (write-batcher.ts, MergeableOp.lazy): its next deliveries wait for those slots.
 */
const TIGHT_ROOM = 64;

function messageInserters(ctx: PgContext) {
  /**
   * Accounts whose room for deliveries in flight was small when this node's publishes last read it (the fast path):
   * their outcomes are not lazy. An account this node never published for counts as roomy: at worst its slots free
   * a few milliseconds later.
   */
  const tight = new Set<string>();
  /** Each account's room as last read, for the pipelined gate (fast-path-pipelined.ts). */
  const known = new KnownRoom();
  const roomOf = (accountId: string, room: number) => {
    known.roomRead(accountId, room);
    if (room < TIGHT_ROOM) tight.add(accountId);
    else tight.delete(accountId);
  };
  // Queue messages inserted here take a FIFO slot at once when one is free (promotion, in this transaction).
  const queues = queueSlots(ctx);
  /**
   * Reserves the deduplication key atomically across nodes: the upsert replaces an expired key and keeps a live one,
   * and returns whichever message id now owns the key.
   */
  const claimDedupKey = async (tx: Tx, m: NewMessage, key: string, now: number, windowMs: number) => {
    const [row] = await tx.query<{ message_id: string }>(
      {
        name: "ferry_dedup_claim",
        text: `INSERT INTO dedup (account_id, key, message_id, expires_at) VALUES ($1, $2, $3, $4)
          ON CONFLICT (account_id, key) DO UPDATE SET
            message_id = CASE WHEN dedup.expires_at <= $5 THEN excluded.message_id ELSE dedup.message_id END,
            expires_at = CASE WHEN dedup.expires_at <= $5 THEN excluded.expires_at ELSE dedup.expires_at END
          RETURNING message_id`,
      },
      [m.accountId, key, m.id, now + windowMs, now],
    );
    return row!.message_id;
  };

  /** Several calls' items in one go: one fast-path check per account, one INSERT (see MergeableOp). */
  const insertCalls = async (tx: Tx, calls: InsertCall[]): Promise<InsertResult[][]> => {
    const rows: { message: Message; leaseOwner: string | null; leaseUntil: number | null }[] = [];
    await checkTokens(tx, calls.map((c) => c.tokenCheck));
    // The fast path yields to flow control and to the account's max_global_parallelism (flow-control.ts).
    // In a pipelined run, without reading the room first when it was ample (fast-path-pipelined.ts).
    const items = calls.flatMap((c) => c.items);
    const fastPathAllowed =
      (tx.pipelined ? await known.gate(tx, items) : undefined) ?? fastPathGate(tx, items, roomOf);
    const answers: InsertResult[][] = [];
    for (const { items, now, dedupWindowMs } of calls) {
      const results: InsertResult[] = [];
      for (const item of items) {
        const m = item.message;
        if (item.dedupKey !== undefined) {
          const owner = await claimDedupKey(tx, m, item.dedupKey, now, dedupWindowMs);
          if (owner !== m.id) {
            results.push({ messageId: owner, deduplicated: true });
            continue;
          }
        }
        const plan = planInsert(item, wantsFastPath(item) && (await fastPathAllowed(m)), now);
        rows.push({ message: plan.message, leaseOwner: plan.leaseOwner, leaseUntil: plan.leaseUntil });
        for (const entry of plan.logs) tx.insertLog(entry);
        tx.addUsage(plan.usage.accountId, now, "requests", plan.usage.count, plan.usage.bytes);
        results.push({ messageId: m.id, deduplicated: false, message: plan.message });
      }
      answers.push(results);
    }
    // Calls merged into one run came within a millisecond or so: the latest clock stands for all of them.
    const now = Math.max(...calls.map((c) => c.now));
    // Queue rows: their queues are locked before the insert (seq order = commit order) and promoted after it.
    const locked = await queues.lockForInsert(tx, rows.map((r) => r.message), now);
    await ctx.insertMessages(tx, rows, now);
    await queues.promoteAfterInsert(tx, locked, now);
    return answers;
  };
  const insertNew: MessageInserter = async (tx, items, now, dedupWindowMs) =>
    (await insertCalls(tx, [{ items, now, dedupWindowMs }]))[0]!;
  return { insertNew, insertCalls, tight };
}

export function messageQueries(ctx: PgContext): MessageQueries {
  const queues = queueSlots(ctx);
  const { insertNew, insertCalls, tight } = messageInserters(ctx);

  const writeRecords = (tx: Tx, { logs, usage }: FinishRecords, now: number) => {
    for (const entry of logs) tx.insertLog(entry);
    tx.addUsage(usage.accountId, now, usage.metric, usage.count, usage.bytes);
  };

  /** Any outcome of one message: its queue, its callbacks, its cancel request (see FinishParams). */
  // A workflow step that fails for good ends its run in the same transaction (docs/workflows.md "Failures").
  const workflows = pgWorkflowWrites(ctx.query, insertNew);

  const finishOne = ({ message: m, owner, now, outcome, logs, newMessages, workflowEnd }: FinishParams) =>
    ctx.write(async (tx) => {
      let kind = outcome.kind;
      const queue = await queues.beforeFinish(tx, m, newMessages); // locks its queue; HELD or deleted (queues.ts)
      const kept = m.derivedLog === true;
      const status = planFinishRecords({ message: m, outcome, logs, now }, outcome.kind).lastStatus;
      const endValues = (k: Exclude<typeof kind, "retry">) =>
        kept ? [m.id, owner, ENDED_STATE[k], now, status] : [m.id, owner];
      switch (outcome.kind) {
        case "delivered":
        case "canceled":
          if ((await tx.query(deleteOwnedSql(queue.hold, kept), endValues(outcome.kind))).length === 0) return false;
          break;
        case "failed": {
          const r = outcome.response;
          const values = [m.id, owner, outcome.dlqId, now, r.status ?? null, JSON.stringify(r.headers), r.body];
          if ((await tx.query(failOwnedSql(queue.hold, kept), [...values, r.error ?? null])).length === 0) return false;
          if (workflowEnd) await workflows.end(tx, workflowEnd);
          break;
        }
        case "retry":
          if ((await tx.query(retryOwnedSql, [m.id, owner, outcome.dueAt, status])).length === 0) {
            // Not retried: either the lease was lost, or a cancel recorded during the attempt wins over a retry
            // (`finishKind` of src/domain/finish-plan.ts, decided here by the statement's `NOT cancel_requested`).
            const gone = await tx.query<{ cancel_requested: boolean }>(
              deleteOwnedSql(queue.hold, kept),
              endValues("canceled"),
            );
            if (gone.length === 0) return false;
            kind = "canceled";
          } else if (ctx.wakesOthers(outcome.dueAt, now)) tx.notifyDue();
          break;
      }
      await queues.afterFinish(tx, m, kind !== "retry", queue, now);
      writeRecords(tx, planFinishRecords({ message: m, outcome, logs, now }, kind), now);
      if (newMessages.length > 0) {
        await insertNew(
          tx,
          newMessages.map((message) => ({ message })),
          now,
          0,
        );
      }
      return true;
    });

  /** Plain deliveries of one batch (see isPlainDelivery, src/domain/finish-plan.ts): one statement for all of them. */
  const finishDelivered = async (tx: Tx, finishes: FinishParams[]): Promise<boolean[]> => {
    // By lease, not by message: the leader may hold the finishes of a message's expired lease and of its new one.
    const leaseOf = (id: string, owner: string) => `${id}\u0000${owner}`;
    const ended = new Set<string>();
    const records = finishes.map((f) => planFinishRecords(f, "delivered"));
    const kept = finishes.flatMap((f, i) => (f.message.derivedLog === true ? [i] : []));
    const gone = finishes.flatMap((f, i) => (f.message.derivedLog !== true ? [i] : []));
    /** Ends the rows at `indexes` with `sql`: ids and owners, then one array per column of `columns`. */
    const end = async (
      indexes: number[],
      sql: { name: string; text: string },
      expecting: ComposableStatement,
      columns: ((f: FinishParams, i: number) => unknown)[],
    ) => {
      if (indexes.length === 0) return;
      const ids = indexes.map((i) => finishes[i]!.message.id);
      const owners = indexes.map((i) => finishes[i]!.owner);
      const values = [ids, owners, ...columns.map((column) => indexes.map((i) => column(finishes[i]!, i)))];
      if (tx.pipelined) {
        // As many rows must end as distinct leases.
        const leases = ids.map((id, k) => leaseOf(id, owners[k]!));
        await tx.defer(expecting, [...values, new Set(leases).size]);
        for (const lease of leases) ended.add(lease);
      } else {
        const rows = await tx.query<{ id: string; owner: string }>(sql, values);
        for (const row of rows) ended.add(leaseOf(row.id, row.owner));
      }
    };
    await end(kept, finishDeliveredKeptSql, finishDeliveredKeptExpectSql, [(f) => f.now, (_, i) => records[i]!.lastStatus]);
    await end(gone, finishDeliveredSql, finishDeliveredExpectSql, []);
    return finishes.map((f, i) => {
      if (!ended.has(leaseOf(f.message.id, f.owner))) return false; // the lease was lost: another node owns it now
      writeRecords(tx, records[i]!, f.now);
      return true;
    });
  };

  return {
    // Publishes of one batch share one run: one fast-path check per account and one INSERT for all their rows.
    // One such run at a time per node, so that its fast-path check never finds the account row held by its own
    // previous run (write-batcher.ts, oneAtATime): it would wait for that run's COMMIT or go through the claim.
    messageInsertMany: (call) =>
      ctx.writeMerged({ kind: "insert", item: call, runMany: insertCalls, oneAtATime: true }),

    messageGet: async ({ accountId, id }) => {
      const [row] = await ctx.query<MessageRow>(
        `SELECT * FROM messages WHERE id = $1 AND account_id = $2 AND ${LIVE_ROW_SQL}`,
        [id, accountId],
      );
      return row ? messageFromRow(row) : undefined;
    },

    // The claim, with flow control and global parallelism decided under row locks in the same transaction.
    messageLeaseDue: (p) =>
      ctx.write(async (tx) => {
        const { messages, startedAt } = await flowClaim(tx, p);
        // The first lease of a row that derives its log is stamped on it; any other lease logs its ACTIVE entry.
        const first: string[] = [];
        for (const m of messages) {
          if (m.derivedLog && m.firstLeasedAt === undefined) {
            first.push(m.id);
            m.firstLeasedAt = startedAt;
          } else {
            tx.insertLog(logEntry(m, "ACTIVE", startedAt));
          }
        }
        if (first.length > 0) await tx.execute(firstLeaseSql, [first, startedAt]);
        return messages;
      }),

    messageRenewLeases: ({ owner, ids, leaseUntil }) =>
      ctx.write((tx) => tx.execute(renewSql, [leaseUntil, owner, ids])),

    messageReleaseLeases: ({ now, expiredOnly, exceptOwner }) =>
      ctx.write(async (tx) => {
        const released = await tx.execute(
          expiredOnly ? releaseExpiredSql : releaseForeignSql,
          expiredOnly ? [now] : [now, exceptOwner],
        );
        if (released > 0) tx.notifyDue();
        return released;
      }),

    messageNextDueAt: async ({ after }) => {
      const [row] = await ctx.query<{ due: number | null }>(
        after === undefined
          ? { name: "ferry_next_due", text: "SELECT MIN(due_at) AS due FROM messages WHERE state IN ('CREATED', 'RETRY')" }
          : nextDueAfterSql,
        after === undefined ? [] : [after],
      );
      // A wait list whose rate window ends (or that is due a re-check) counts as due work too.
      const wake = await flowNextWakeAt(ctx);
      const due = row?.due ?? undefined;
      if (due === undefined) return wake;
      return wake === undefined ? due : Math.min(due, wake);
    },

    messageFinish: (p) =>
      isPlainDelivery(p)
        ? // Lazy (write-batcher.ts): it rides along with the next publish run or claim instead of committing alone.
          // Not when a flow-control key or its account's max_global_parallelism may have messages wait for it: they
          // would start that much later.
          ctx.writeMerged({
            kind: "finish-delivered",
            item: p,
            runMany: finishDelivered,
            lazy: p.message.spec.flowControl === undefined && !tight.has(p.message.accountId),
          })
        : finishOne(p),

    messageCancel: ({ accountId, now, filter, count }) =>
      ctx.write(async (tx) => {
        const params = new Params();
        const where = filterSql(filter, { time: "created_at", idColumn: "id" }, params);
        // FOR UPDATE: a row being claimed or finished elsewhere is waited for, then seen in its new state.
        const from = `FROM messages WHERE account_id = ${params.add(accountId)} AND ${LIVE_ROW_SQL}
            AND state <> 'HELD' AND NOT cancel_requested${andAll(where)}`;
        await queues.lockForCancel(tx, from, params.values); // queue rows before message rows (queues.ts)
        const rows = await tx.query<MessageRow>(
          `SELECT * ${from} ORDER BY seq ${count !== undefined ? `LIMIT ${params.add(count)}` : ""} FOR UPDATE`,
          params.values,
        );
        const inFlight: string[] = [];
        const waiting: Message[] = [];
        for (const row of rows) {
          const m = messageFromRow(row);
          const plan = planCancel(m, now);
          for (const entry of plan.logs) tx.insertLog(entry);
          if (plan.inFlight) inFlight.push(m.id);
          else waiting.push(m);
        }
        if (inFlight.length > 0) {
          await tx.query("UPDATE messages SET cancel_requested = TRUE WHERE id = ANY($1::text[])", [inFlight]);
        }
        if (waiting.length > 0) {
          await tx.execute(stampCanceledSql, [waiting.map((m) => m.id), now]);
          await queues.removeCancelled(tx, waiting, now); // deleted, or HELD; frees queue slots
          tx.addUsage(accountId, now, "canceled", waiting.length, 0);
        }
        return rows.length;
      }),
  };
}
