import { claimTime } from "../claim-clock.js";
import { planCancel } from "../../domain/cancel-plan.js";
import { dedupKeyLive, planInsert, wantsFastPath } from "../../domain/insert-plan.js";
import {
  ENDED_STATE,
  type FinishRecords,
  finishKind,
  isPlainDelivery,
  planFinishRecords,
} from "../../domain/finish-plan.js";
import { LIVE_ROW } from "./row-states.js";
import { logEntry } from "../../domain/log.js";
import type { MessageQueries } from "../adapter-parts.js";
import type { InsertItem, InsertResult } from "../store.js";
import type { SqliteContext } from "./context.js";
import { filterSql } from "./filters.js";
import { flowEngine } from "./flow-control.js";
import { queueSlots } from "./queues.js";
import { type MessageRow, messageFromRow } from "./rows.js";
import { workflowWrites } from "./workflow-writes.js";

/**
 * Inserts messages (each row standing for its CREATED entry, and its first ACTIVE one when leased: docs/states.md
 * "The message row"; the entries of a redacted message written out) and usage, skipping live duplicates.
 * Synchronous: call it inside `ctx.write` (publish, attempt outcomes, schedule ticks share it).
 */
export function messageInserter(
  ctx: SqliteContext,
): (items: InsertItem[], now: number, windowMs: number) => InsertResult[] {
  const { db } = ctx;
  // Queue messages inserted here take a FIFO slot at once when one is free (promotion, in this transaction).
  const queues = queueSlots(ctx);
  const flow = flowEngine(db);
  const dedupGet = db.prepare("SELECT message_id, expires_at FROM dedup WHERE account_id = ? AND key = ?");
  const dedupPut = db.prepare(
    `INSERT INTO dedup (account_id, key, message_id, expires_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (account_id, key) DO UPDATE SET message_id = excluded.message_id, expires_at = excluded.expires_at`,
  );

  return (items: InsertItem[], now: number, windowMs: number): InsertResult[] => {
    const results: InsertResult[] = [];
    for (const item of items) {
      const m = item.message;
      if (item.dedupKey !== undefined) {
        const hit = dedupGet.get(m.accountId, item.dedupKey) as { message_id: string; expires_at: number } | undefined;
        if (hit && dedupKeyLive(hit.expires_at, now)) {
          results.push({ messageId: hit.message_id, deduplicated: true });
          continue;
        }
        dedupPut.run(m.accountId, item.dedupKey, m.id, now + windowMs);
      }
      // The fast path yields to flow control and to the account's max_global_parallelism: such a row goes to the claim.
      const plan = planInsert(item, wantsFastPath(item) && flow.fastPathAllowed(m), now);
      ctx.insertMessage(plan.message, plan.leaseOwner, plan.leaseUntil);
      for (const entry of plan.logs) ctx.insertLog(entry);
      ctx.addUsage(plan.usage.accountId, now, "requests", plan.usage.count, plan.usage.bytes);
      results.push({ messageId: m.id, deduplicated: false, message: plan.message });
    }
    queues.afterInsert(results, now);
    return results;
  };
}

/**
 * A plain delivery of a row that derives its log: one UPDATE ends it (docs/states.md "The message row"). Positional
 * parameters on the hot path (rows.ts `messageValues` says why): now, seq, status, id, owner. OR FAIL spares it a
 * statement journal, as the message INSERT (context.ts `MESSAGE_INSERT_SQL`).
 */
export const DELIVER_KEPT_SQL = `UPDATE OR FAIL messages SET state = 'DELIVERED', outcome = 'DELIVERED', lease_owner = NULL,
    lease_until = NULL, finished_at = ?, finished_seq = ?, last_status = ?, attempts = attempts + 1
  WHERE id = ? AND lease_owner = ? AND state = 'ACTIVE'`;

export function messageQueries(ctx: SqliteContext): MessageQueries {
  const { db } = ctx;
  const queues = queueSlots(ctx);
  const get = db.prepare(`SELECT * FROM messages WHERE id = ? AND account_id = ? AND ${LIVE_ROW}`);
  // The claim, with flow control and global parallelism decided in the same transaction (flow-control.ts).
  // SQLite has no SKIP LOCKED; the single writer connection gives the same guarantee.
  const flow = flowEngine(db);
  const renew = db.prepare(
    "UPDATE messages SET lease_until = ? WHERE id IN (SELECT value FROM json_each(?)) AND state = 'ACTIVE' AND lease_owner = ?",
  );
  const releaseExpired = db.prepare(
    `UPDATE messages SET state = CASE WHEN retried > 0 THEN 'RETRY' ELSE 'CREATED' END, due_at = @now,
       lease_owner = NULL, lease_until = NULL
     WHERE state = 'ACTIVE' AND lease_until < @now`,
  );
  const releaseForeign = db.prepare(
    `UPDATE messages SET state = CASE WHEN retried > 0 THEN 'RETRY' ELSE 'CREATED' END, due_at = @now,
       lease_owner = NULL, lease_until = NULL
     WHERE state = 'ACTIVE' AND lease_owner IS NOT @exceptOwner`,
  );
  const nextDue = db.prepare("SELECT MIN(due_at) AS due FROM messages WHERE state IN ('CREATED', 'RETRY')");
  // Only messages due later: those due now were just left by the claim (destinations at their share).
  const nextDueAfter = db.prepare(
    "SELECT MIN(due_at) AS due FROM messages WHERE state IN ('CREATED', 'RETRY') AND due_at > ?",
  );
  const deleteOwned = db.prepare("DELETE FROM messages WHERE id = ? AND lease_owner = ? AND state = 'ACTIVE'");
  // Rows that derive their log (docs/states.md "The message row") stay: the first lease and the end are stamped on
  // them, and a plain delivery is one UPDATE (it was one DELETE).
  const firstLease = db.prepare(
    "UPDATE messages SET first_leased_at = ?, active_seq = ? WHERE id = ? AND first_leased_at IS NULL",
  );
  const deliverKept = db.prepare(DELIVER_KEPT_SQL);
  const stampEnd = db.prepare(
    `UPDATE messages SET outcome = @outcome, finished_at = @now, finished_seq = @seq,
       last_status = CASE WHEN @attempted = 1 THEN @status ELSE last_status END, attempts = attempts + @attempted
     WHERE id = @id AND derived_log = 1`,
  );
  const ownedRow = db.prepare(
    "SELECT cancel_requested FROM messages WHERE id = ? AND lease_owner = ? AND state = 'ACTIVE'",
  );
  const toRetry = db.prepare(
    `UPDATE messages SET state = 'RETRY', due_at = ?, retried = retried + 1, lease_owner = NULL, lease_until = NULL,
       last_status = ?, attempts = attempts + 1
     WHERE id = ?`,
  );
  const markCancel = db.prepare("UPDATE messages SET cancel_requested = 1 WHERE id = ?");
  const insertDlq = db.prepare(
    `INSERT INTO dlq (dlq_id, account_id, message_id, kind, parent_id, url, body, spec, created_at, not_before, retried,
       topic_name, endpoint_name, queue_name, schedule_id, caller_ip, labels, flow_key, failed_at, response_status,
       response_headers, response_body, error)
     SELECT @dlqId, account_id, id, kind, parent_id, url, body, spec, created_at, not_before, retried, topic_name,
       endpoint_name, queue_name, schedule_id, caller_ip, labels, flow_key, @now, @status, @headers, @body, @error
     FROM messages WHERE id = @id`,
  );

  const insertNew = messageInserter(ctx);
  // A workflow step that fails for good ends its run in the same transaction (docs/workflows.md "Failures").
  const workflows = workflowWrites(ctx, insertNew);
  const writeRecords = ({ logs, usage }: FinishRecords, now: number) => {
    for (const entry of logs) ctx.insertLog(entry);
    ctx.addUsage(usage.accountId, now, usage.metric, usage.count, usage.bytes);
  };

  return {
    messageInsertMany: ({ items, now, dedupWindowMs }) => ctx.write(() => insertNew(items, now, dedupWindowMs)),

    messageGet: async ({ accountId, id }) => {
      const row = get.get(id, accountId) as MessageRow | undefined;
      return row ? messageFromRow(row) : undefined;
    },

    messageLeaseDue: ({ now, limit, owner, leaseUntil, liveClockOffsetMs, destinations }) =>
      ctx.write(() => {
        // The write may have queued behind others: windows start when the claim really runs (see the Store).
        const at = claimTime({ now, ...(liveClockOffsetMs === undefined ? {} : { liveClockOffsetMs }) });
        const messages = flow.claim({ now: at, limit, owner, leaseUntil, ...(destinations ? { destinations } : {}) });
        for (const m of messages) {
          // The first lease of a row that derives its log is stamped on it; any other lease logs its ACTIVE entry.
          if (m.derivedLog && m.firstLeasedAt === undefined) {
            firstLease.run(at, ctx.nextLogSeq(), m.id);
            m.firstLeasedAt = at;
          } else {
            ctx.insertLog(logEntry(m, "ACTIVE", at));
          }
        }
        return messages;
      }),

    messageRenewLeases: ({ owner, ids, leaseUntil }) =>
      ctx.write(() => renew.run(leaseUntil, JSON.stringify(ids), owner).changes),

    messageReleaseLeases: ({ now, expiredOnly, exceptOwner }) =>
      ctx.write(() => (expiredOnly ? releaseExpired.run({ now }) : releaseForeign.run({ now, exceptOwner })).changes),

    messageNextDueAt: async ({ after }) => {
      const row = (after === undefined ? nextDue.get() : nextDueAfter.get(after)) as { due: number | null };
      // A wait list whose rate window ends (or that is due a re-check) counts as due work too.
      const wake = flow.nextWakeAt();
      if (row.due === null) return wake;
      return wake === undefined ? row.due : Math.min(row.due, wake);
    },

    messageFinish: (p) =>
      ctx.write(() => {
        const { message: m, owner, now, outcome, newMessages } = p;
        if (isPlainDelivery(p)) {
          // One statement instead of a read and a delete: a plain delivery has no cancel flag, slot or parent to look at.
          const records = planFinishRecords(p, "delivered");
          const changed = m.derivedLog
            ? deliverKept.run(now, ctx.nextLogSeq(), records.lastStatus, m.id, owner).changes
            : deleteOwned.run(m.id, owner).changes;
          if (changed === 0) return false; // the lease was lost
          writeRecords(records, now);
          flow.afterFinish(m, now);
          return true;
        }
        const row = ownedRow.get(m.id, owner) as { cancel_requested: number } | undefined;
        if (!row) return false; // the lease was lost: another node owns this message now
        const kind = finishKind(outcome, row.cancel_requested === 1);
        const records = planFinishRecords(p, kind);
        if (kind !== "retry") {
          const seq = kind === "delivered" && m.derivedLog ? ctx.nextLogSeq() : null;
          const end = { outcome: ENDED_STATE[kind], now, seq, attempted: 1, status: records.lastStatus, id: m.id };
          stampEnd.run(end); // before the row ends (queues.release): its outcome is the state it keeps
        }
        switch (kind) {
          case "retry":
            toRetry.run((outcome as { dueAt: number }).dueAt, records.lastStatus, m.id);
            queues.retrying(m);
            break;
          case "failed": {
            const o = outcome as Extract<typeof outcome, { kind: "failed" }>;
            insertDlq.run({
              dlqId: o.dlqId,
              now,
              id: m.id,
              status: o.response.status ?? null,
              headers: JSON.stringify(o.response.headers),
              body: o.response.body,
              error: o.response.error ?? null,
            });
            queues.release(m, newMessages);
            if (p.workflowEnd) workflows.end(p.workflowEnd);
            break;
          }
          case "delivered":
          case "canceled":
            queues.release(m, newMessages);
            break;
        }
        writeRecords(records, now);
        flow.afterFinish(m, now); // a slot of its key and of its account is free again
        insertNew(
          newMessages.map((message) => ({ message })),
          now,
          0,
        );
        return true;
      }),

    messageCancel: ({ accountId, now, filter, count }) =>
      ctx.write(() => {
        const { where, params } = filterSql(filter, { time: "created_at", idColumn: "id" });
        const sql = `SELECT * FROM messages WHERE account_id = ? AND ${LIVE_ROW} AND state != 'HELD'
          AND cancel_requested = 0
          ${where.map((w) => `AND ${w}`).join(" ")} ORDER BY seq ${count !== undefined ? "LIMIT ?" : ""}`;
        const rows = db.prepare(sql).all(accountId, ...params, ...(count !== undefined ? [count] : [])) as MessageRow[];
        for (const row of rows) {
          const m = messageFromRow(row);
          const plan = planCancel(m, now);
          for (const entry of plan.logs) ctx.insertLog(entry);
          if (plan.inFlight) {
            markCancel.run(m.id);
          } else {
            stampEnd.run({ outcome: "CANCELED", now, seq: null, attempted: 0, status: null, id: m.id });
            queues.release(m, []);
            ctx.addUsage(accountId, now, "canceled", 1, 0);
          }
        }
        return rows.length;
      }),
  };
}
