import type { RunFilter, RunState, Waiter, WorkflowRun } from "../../domain/workflow.js";
import { RUN_STATES } from "../../domain/workflow.js";
import type { WorkflowStore } from "../workflow-store.js";
import { seqPage } from "../pages.js";
import { RUN_INSERT_COLUMNS, type RunRow, runFromRow, runInsertValues, waiterFromRow } from "../workflow-rows.js";
import type { PgContext } from "./context.js";
import { Params } from "./filters.js";
import { messageInserter } from "./messages.js";
import { pgWorkflowWrites } from "./workflow-writes.js";

/** WHERE terms of a run filter (mirrors src/store/sqlite/workflows.ts). */
function runWhere(filter: RunFilter, params: Params): string[] {
  const where: string[] = [];
  if (filter.runIds && filter.runIds.length > 0) where.push(`run_id = ANY(${params.add(filter.runIds)}::text[])`);
  if (filter.state && filter.state.length > 0) where.push(`state = ANY(${params.add(filter.state)}::text[])`);
  if (filter.url !== undefined) {
    const p = params.add(filter.url);
    where.push(filter.urlExact ? `url = ${p}` : `left(url, length(${p})) = ${p}`);
  }
  if (filter.label !== undefined) where.push(`label = ${params.add(filter.label)}`);
  if (filter.fromDate !== undefined) where.push(`created_at >= ${params.add(filter.fromDate)}`);
  if (filter.toDate !== undefined) where.push(`created_at <= ${params.add(filter.toDate)}`);
  if (filter.createdAt !== undefined) where.push(`created_at = ${params.add(filter.createdAt)}`);
  if (filter.callerIp !== undefined) where.push(`caller_ip = ${params.add(filter.callerIp)}`);
  if (filter.flowControlKey !== undefined) where.push(`flow_key = ${params.add(filter.flowControlKey)}`);
  return where;
}

const and = (where: string[]) => where.map((w) => ` AND ${w}`).join("");

export function workflowQueries(ctx: PgContext): WorkflowStore {
  const insertNew = messageInserter(ctx);
  const w = pgWorkflowWrites(ctx.query, insertNew);
  const insertRunSql = `INSERT INTO workflow_runs (${RUN_INSERT_COLUMNS.join(", ")})
    VALUES (${RUN_INSERT_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})
    ON CONFLICT (account_id, run_id) DO NOTHING RETURNING seq`;

  return {
    workflowRunCreate: ({ run: r, item, now, restartRest, history }) =>
      ctx.write(async (tx) => {
        let inserted = await tx.query(insertRunSql, runInsertValues(r, now, false));
        let restarted = false;
        if (inserted.length === 0) {
          const existing = await w.lockRun(tx, r.accountId, r.runId);
          if (existing && !(restartRest && (existing.rest_trigger === true || existing.rest_trigger === 1))) {
            return { created: false as const, run: runFromRow(existing) };
          }
          await w.deleteRunRows(tx, r.accountId, r.runId, true);
          inserted = await tx.query(insertRunSql, runInsertValues(r, now, false));
          restarted = true;
        }
        const kept = history ?? [];
        const insertStep = `INSERT INTO workflow_steps (account_id, run_id, position, message_id, call_type, body,
          created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`;
        for (const [i, e] of kept.entries()) {
          await tx.execute(insertStep, [r.accountId, r.runId, i, e.messageId, e.callType, e.body, e.createdAt]);
        }
        if (kept.length > 0) {
          await tx.execute("UPDATE workflow_runs SET step_count = $1 WHERE account_id = $2 AND run_id = $3", [
            kept.length + 1,
            r.accountId,
            r.runId,
          ]);
        }
        const first = kept.length > 0 ? (item.message.body ?? Buffer.alloc(0)) : r.initialBody;
        await tx.execute(insertStep, [r.accountId, r.runId, kept.length, item.message.id, "step", first, now]);
        const [result] = await insertNew(tx, [item], now, 0);
        if (!restarted) tx.addUsage(r.accountId, now, "workflow_run", 1, 0);
        tx.addUsage(r.accountId, now, "workflow_message", 1, 0);
        return { created: true as const, result: result! };
      }),

    workflowRunGet: ({ accountId, runId }) => w.run(undefined, accountId, runId),

    workflowStepAppend: ({ accountId, runId, steps, now }) =>
      ctx.write(async (tx) => {
        const row = await w.lockRun(tx, accountId, runId);
        if (!row) return { appended: false as const };
        if (row.state !== "RUN_STARTED") return { appended: false as const, run: runFromRow(row) };
        const results = await w.appendLocked(tx, row, steps, now);
        const delivery = await w.leasedDelivery(tx, row, results);
        return delivery ? { appended: true as const, results, delivery } : { appended: true as const, results };
      }),

    workflowHistory: ({ accountId, runId }) => w.historyOf(undefined, accountId, runId),

    workflowDeliveryPrepare: async ({ accountId, runId, messageId, waiterId, body, now }) => {
      if (waiterId === undefined) {
        // A step's entry was committed before its message could be claimed, and every earlier entry before it (the
        // run's row lock orders appends), so a plain read sees the history up to it.
        const run = await w.run(undefined, accountId, runId);
        if (!run || run.state !== "RUN_STARTED") return run ? { deliver: false as const, run } : { deliver: false as const };
        const history = await w.historyOf(undefined, accountId, runId);
        const i = history.findIndex((e) => e.messageId === messageId);
        if (i < 0) return { deliver: false as const, run };
        return { deliver: true as const, run, history: history.slice(0, i + 1) };
      }
      return ctx.write(async (tx) => {
        const row = await w.lockRun(tx, accountId, runId);
        if (!row) return { deliver: false as const };
        const run = runFromRow(row);
        if (row.state !== "RUN_STARTED") return { deliver: false as const, run };
        let history = await w.historyOf(tx, accountId, runId);
        let i = history.findIndex((e) => e.messageId === messageId);
        if (i < 0) {
          const gone = await tx.execute("DELETE FROM workflow_waiters WHERE waiter_id = $1 AND account_id = $2", [
            waiterId,
            accountId,
          ]);
          if (gone === 0) return { deliver: false as const, run };
          // The wait timed out: its timeout message becomes the run's next entry, once.
          await tx.execute(
            `INSERT INTO workflow_steps (account_id, run_id, position, message_id, call_type, body, created_at)
             VALUES ($1, $2, $3, $4, 'step', $5, $6)`,
            [accountId, runId, row.step_count, messageId, body ?? Buffer.alloc(0), now],
          );
          await tx.execute("UPDATE workflow_runs SET step_count = step_count + 1, updated_at = $1 WHERE account_id = $2 AND run_id = $3", [
            now,
            accountId,
            runId,
          ]);
          history = await w.historyOf(tx, accountId, runId);
          i = history.length - 1;
        }
        return { deliver: true as const, run, history: history.slice(0, i + 1) };
      });
    },

    workflowFailureResend: ({ accountId, runId, item, now }) =>
      ctx.write(async (tx) => {
        const row = await w.lockRun(tx, accountId, runId);
        if (!row) return false;
        await tx.execute(
          "UPDATE workflow_runs SET failure_message_id = $1, updated_at = $2 WHERE account_id = $3 AND run_id = $4",
          [item.message.id, now, accountId, runId],
        );
        await insertNew(tx, [item], now, 0);
        return true;
      }),

    workflowRunEnd: (p) =>
      ctx.write(async (tx) => {
        const ended = await w.end(tx, p);
        if (ended) return { ended: true, run: runFromRow(ended.row), followedUp: ended.followedUp };
        const run = await w.run(tx, p.accountId, p.runId);
        return run ? { ended: false, run } : { ended: false };
      }),

    workflowRunCancelMany: ({ accountId, filter, count, now }) =>
      ctx.write(async (tx) => {
        const params = new Params();
        const where = `account_id = ${params.add(accountId)} AND state = 'RUN_STARTED'${and(runWhere(filter, params))}`;
        const rows = await tx.query<{ run_id: string }>(
          `SELECT run_id FROM workflow_runs WHERE ${where} ORDER BY seq LIMIT ${params.add(count)}`,
          params.values,
        );
        const cancelled: WorkflowRun[] = [];
        for (const row of rows) {
          const ended = await w.end(tx, { accountId, runId: row.run_id, state: "RUN_CANCELED", now });
          if (ended) cancelled.push(runFromRow(ended.row));
        }
        return cancelled;
      }),

    workflowRunList: async ({ accountId, filter, cursor, count }) => {
      const params = new Params();
      const where = [`account_id = ${params.add(accountId)}`, ...runWhere(filter, params)];
      if (cursor !== undefined) where.push(`seq < ${params.add(Number(cursor))}`);
      const rows = await ctx.query<RunRow>(
        `SELECT * FROM workflow_runs WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ${params.add(count + 1)}`,
        params.values,
      );
      const { page, cursor: next } = seqPage(rows, count);
      const runs = page.map(runFromRow);
      return next === undefined ? { runs } : { runs, cursor: next };
    },

    workflowWaitRegister: ({ waiter, timeoutItem, now }) =>
      ctx.write(async (tx) => {
        const row = await w.lockRun(tx, waiter.accountId, waiter.runId);
        if (!row || row.state !== "RUN_STARTED") {
          return row
            ? { registered: false as const, reason: "ended" as const, run: runFromRow(row) }
            : { registered: false as const, reason: "ended" as const };
        }
        const [event] = await tx.query<{ data: Buffer }>(
          "SELECT data FROM workflow_events WHERE account_id = $1 AND run_id = $2 AND event_id = $3",
          [waiter.accountId, waiter.runId, waiter.eventId],
        );
        if (event) return { registered: false as const, reason: "event" as const, data: Buffer.from(event.data) };
        await tx.execute(
          `INSERT INTO workflow_waiters (waiter_id, account_id, event_id, run_id, deadline, created_at,
             timeout_message_id, waiter) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [
            waiter.waiterId,
            waiter.accountId,
            waiter.eventId,
            waiter.runId,
            waiter.deadline,
            now,
            waiter.timeoutMessageId,
            JSON.stringify(waiter),
          ],
        );
        await insertNew(tx, [timeoutItem], now, 0);
        return { registered: true as const };
      }),

    workflowWaitResolve: ({ accountId, runId, eventId, step, now }) =>
      ctx.write(async (tx) => {
        const row = await w.lockRun(tx, accountId, runId);
        if (!row || row.state !== "RUN_STARTED") return false;
        const gone = await tx.execute(
          "DELETE FROM workflow_events WHERE account_id = $1 AND run_id = $2 AND event_id = $3",
          [accountId, runId, eventId],
        );
        if (gone === 0) return false;
        await w.appendLocked(tx, row, [step], now);
        return true;
      }),

    workflowWaiterList: async ({ accountId, eventId, runId }) =>
      (
        await ctx.query<{ waiter: string }>(
          "SELECT waiter FROM workflow_waiters WHERE account_id = $1 AND event_id = $2 ORDER BY created_at",
          [accountId, eventId],
        )
      )
        .map(waiterFromRow)
        .filter((x: Waiter) => runId === undefined || x.runId === runId),

    workflowNotifyApply: ({ accountId, deliveries, lookback, now }) =>
      ctx.write(async (tx) => {
        const resolved: string[] = [];
        // In run order, so two notifies locking the same runs lock them in the same order.
        const ordered = [...deliveries].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
        for (const d of ordered) {
          const row = await w.lockRun(tx, accountId, d.runId);
          if (!row || row.state !== "RUN_STARTED") continue;
          const gone = await tx.execute("DELETE FROM workflow_waiters WHERE waiter_id = $1 AND account_id = $2", [
            d.waiterId,
            accountId,
          ]);
          if (gone === 0) continue;
          await w.appendLocked(tx, row, [d.step], now);
          resolved.push(d.waiterId);
        }
        if (resolved.length === 0 && lookback) {
          const row = await w.lockRun(tx, accountId, lookback.runId);
          // A wait registered since the caller listed the waiters (it locked the run too): it gets the event instead.
          const waiting = await tx.query(
            "SELECT 1 FROM workflow_waiters WHERE account_id = $1 AND run_id = $2 AND event_id = $3",
            [accountId, lookback.runId, lookback.eventId],
          );
          if (row && row.state === "RUN_STARTED" && waiting.length === 0) {
            await tx.execute(
              `INSERT INTO workflow_events (account_id, run_id, event_id, data, created_at) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (account_id, run_id, event_id) DO UPDATE SET data = excluded.data, created_at = excluded.created_at`,
              [accountId, lookback.runId, lookback.eventId, lookback.data, now],
            );
          }
        }
        return resolved;
      }),

    workflowWaiterCount: async () =>
      Number((await ctx.query<{ n: number }>("SELECT count(*)::int8 AS n FROM workflow_waiters"))[0]!.n),

    workflowRunCounts: async ({ accountId, since }) => {
      const params = new Params();
      const where: string[] = [];
      if (accountId !== undefined) where.push(`account_id = ${params.add(accountId)}`);
      if (since !== undefined) where.push(`created_at >= ${params.add(since)}`);
      const rows = await ctx.query<{ state: RunState; n: number }>(
        `SELECT state, count(*)::int8 AS n FROM workflow_runs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} GROUP BY state`,
        params.values,
      );
      const counts = Object.fromEntries(RUN_STATES.map((s) => [s, 0])) as Record<RunState, number>;
      for (const r of rows) counts[r.state] = Number(r.n);
      return counts;
    },

    workflowRetentionDelete: ({ before, limit }) =>
      ctx.write(async (tx) => {
        const rows = await tx.query<{ account_id: string; run_id: string }>(
          `SELECT account_id, run_id FROM workflow_runs WHERE completed_at < $1 ORDER BY completed_at LIMIT $2
           FOR UPDATE SKIP LOCKED`,
          [before, limit],
        );
        for (const r of rows) await w.deleteRunRows(tx, r.account_id, r.run_id, true);
        return rows.length;
      }),
  };
}
