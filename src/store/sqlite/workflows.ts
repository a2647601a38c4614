import type { RunFilter, RunState, Waiter, WorkflowRun } from "../../domain/workflow.js";
import { RUN_STATES } from "../../domain/workflow.js";
import type { WorkflowStore } from "../workflow-store.js";
import { seqPage } from "../pages.js";
import { type RunRow, runFromRow, runInsertValues, waiterFromRow } from "../workflow-rows.js";
import type { SqliteContext } from "./context.js";
import { messageInserter } from "./messages.js";
import { workflowWrites } from "./workflow-writes.js";

/** WHERE terms of a run filter (docs/workflows.md "Runs"). */
function runWhere(filter: RunFilter): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.runIds && filter.runIds.length > 0) {
    where.push(`run_id IN (${filter.runIds.map(() => "?").join(", ")})`);
    params.push(...filter.runIds);
  }
  if (filter.state && filter.state.length > 0) {
    where.push(`state IN (${filter.state.map(() => "?").join(", ")})`);
    params.push(...filter.state);
  }
  if (filter.url !== undefined) {
    if (filter.urlExact) where.push("url = ?");
    else where.push("substr(url, 1, length(?)) = ?");
    params.push(...(filter.urlExact ? [filter.url] : [filter.url, filter.url]));
  }
  if (filter.label !== undefined) {
    where.push("label = ?");
    params.push(filter.label);
  }
  if (filter.fromDate !== undefined) {
    where.push("created_at >= ?");
    params.push(filter.fromDate);
  }
  if (filter.toDate !== undefined) {
    where.push("created_at <= ?");
    params.push(filter.toDate);
  }
  if (filter.createdAt !== undefined) {
    where.push("created_at = ?");
    params.push(filter.createdAt);
  }
  if (filter.callerIp !== undefined) {
    where.push("caller_ip = ?");
    params.push(filter.callerIp);
  }
  if (filter.flowControlKey !== undefined) {
    where.push("flow_key = ?");
    params.push(filter.flowControlKey);
  }
  return { where, params };
}

const and = (where: string[]) => where.map((w) => `AND ${w}`).join(" ");

export function workflowQueries(ctx: SqliteContext): WorkflowStore {
  const { db } = ctx;
  const w = workflowWrites(ctx, messageInserter(ctx));
  const { insertRun, deleteRun, insertStep, bumpSteps, deleteSteps, insertWaiter, deleteWaiter, deleteRunWaiters } = w;
  const { waitersOfEvent, waiterCount, getEvent, deleteEvent, putEvent, deleteRunEvents, expired } = w;
  const { run, append, appendRun, leasedDelivery, end, historyOf, insertNew } = w;

  return {
    workflowRunCreate: ({ run: r, item, now, restartRest, history }) =>
      ctx.write(() => {
        const existing = run(r.accountId, r.runId);
        if (existing) {
          if (!(restartRest && existing.restTrigger)) return { created: false as const, run: existing };
          deleteRunWaiters.run(r.accountId, r.runId);
          deleteSteps.run(r.accountId, r.runId);
          deleteRun.run(r.accountId, r.runId);
        }
        insertRun.run(...runInsertValues(r, now, true));
        const m = item.message;
        const kept = history ?? [];
        kept.forEach((e, i) => insertStep.run(r.accountId, r.runId, i, e.messageId, e.callType, e.body, e.createdAt));
        if (kept.length > 0) {
          db.prepare("UPDATE workflow_runs SET step_count = ? WHERE account_id = ? AND run_id = ?").run(
            kept.length + 1,
            r.accountId,
            r.runId,
          );
        }
        insertStep.run(r.accountId, r.runId, kept.length, m.id, "step", kept.length > 0 ? (m.body ?? Buffer.alloc(0)) : r.initialBody, now);
        const [result] = insertNew([item], now, 0);
        if (!existing) ctx.addUsage(r.accountId, now, "workflow_run", 1, 0);
        ctx.addUsage(r.accountId, now, "workflow_message", 1, 0);
        return { created: true as const, result: result! };
      }),

    workflowRunGet: async ({ accountId, runId }) => run(accountId, runId),

    workflowStepAppend: ({ accountId, runId, steps: list, now }) =>
      ctx.write(() => {
        const appended = appendRun(accountId, runId, list, now);
        if (!appended) {
          const r = run(accountId, runId);
          return r ? { appended: false as const, run: r } : { appended: false as const };
        }
        const { results, row } = appended;
        const delivery = leasedDelivery(row, results);
        return delivery ? { appended: true as const, results, delivery } : { appended: true as const, results };
      }),

    workflowHistory: async ({ accountId, runId }) => historyOf(accountId, runId),

    workflowDeliveryPrepare: ({ accountId, runId, messageId, waiterId, body, now }) => {
      const prepare = () => {
        const r = run(accountId, runId);
        if (!r || r.state !== "RUN_STARTED") return r ? { deliver: false as const, run: r } : { deliver: false as const };
        let history = historyOf(accountId, runId);
        let i = history.findIndex((e) => e.messageId === messageId);
        if (i < 0 && waiterId !== undefined && deleteWaiter.run(waiterId, accountId).changes > 0) {
          // The wait timed out: its timeout message becomes the run's next entry, once.
          insertStep.run(accountId, runId, history.length, messageId, "step", body ?? Buffer.alloc(0), now);
          bumpSteps.run(now, accountId, runId);
          history = historyOf(accountId, runId);
          i = history.length - 1;
        }
        if (i < 0) return { deliver: false as const, run: r };
        return { deliver: true as const, run: r, history: history.slice(0, i + 1) };
      };
      // Only a timeout message may write; a step's preparation is a read.
      return waiterId === undefined ? Promise.resolve(prepare()) : ctx.write(prepare);
    },

    workflowFailureResend: ({ accountId, runId, item, now }) =>
      ctx.write(() => {
        const changed = db
          .prepare("UPDATE workflow_runs SET failure_message_id = ?, updated_at = ? WHERE account_id = ? AND run_id = ?")
          .run(item.message.id, now, accountId, runId).changes;
        if (changed === 0) return false;
        insertNew([item], now, 0);
        return true;
      }),

    workflowRunEnd: (p) =>
      ctx.write(() => {
        const ended = end(p);
        if (ended) return { ended: true, run: runFromRow(ended.row), followedUp: ended.followedUp };
        const r = run(p.accountId, p.runId);
        return r ? { ended: false, run: r } : { ended: false };
      }),

    workflowRunCancelMany: ({ accountId, filter, count, now }) =>
      ctx.write(() => {
        const { where, params } = runWhere(filter);
        const rows = db
          .prepare(
            `SELECT * FROM workflow_runs WHERE account_id = ? AND state = 'RUN_STARTED' ${and(where)} ORDER BY seq LIMIT ?`,
          )
          .all(accountId, ...params, count) as RunRow[];
        const cancelled: WorkflowRun[] = [];
        for (const row of rows) {
          const ended = end({ accountId, runId: row.run_id, state: "RUN_CANCELED", now });
          if (ended) cancelled.push(runFromRow(ended.row));
        }
        return cancelled;
      }),

    workflowRunList: async ({ accountId, filter, cursor, count }) => {
      const { where, params } = runWhere(filter);
      if (cursor !== undefined) {
    where.push("seq < ?");
    params.push(Number(cursor));
  }
      const rows = db
        .prepare(`SELECT * FROM workflow_runs WHERE account_id = ? ${and(where)} ORDER BY seq DESC LIMIT ?`)
        .all(accountId, ...params, count + 1) as RunRow[];
      const { page, cursor: next } = seqPage(rows, count);
      const runs = page.map(runFromRow);
      return next === undefined ? { runs } : { runs, cursor: next };
    },

    workflowWaitRegister: ({ waiter, timeoutItem, now }) =>
      ctx.write(() => {
        const r = run(waiter.accountId, waiter.runId);
        if (!r || r.state !== "RUN_STARTED") {
          return r ? { registered: false as const, reason: "ended" as const, run: r } : { registered: false as const, reason: "ended" as const };
        }
        const event = getEvent.get(waiter.accountId, waiter.runId, waiter.eventId) as { data: Buffer } | undefined;
        if (event) return { registered: false as const, reason: "event" as const, data: Buffer.from(event.data) };
        insertWaiter.run(
          waiter.waiterId,
          waiter.accountId,
          waiter.eventId,
          waiter.runId,
          waiter.deadline,
          now,
          waiter.timeoutMessageId,
          JSON.stringify(waiter),
        );
        insertNew([timeoutItem], now, 0);
        return { registered: true as const };
      }),

    workflowWaitResolve: ({ accountId, runId, eventId, step, now }) =>
      ctx.write(() => {
        if (deleteEvent.run(accountId, runId, eventId).changes === 0) return false;
        return append(accountId, runId, [step], now) !== undefined;
      }),

    workflowWaiterList: async ({ accountId, eventId, runId }) =>
      (waitersOfEvent.all(accountId, eventId) as { waiter: string }[])
        .map(waiterFromRow)
        .filter((w: Waiter) => runId === undefined || w.runId === runId),

    workflowNotifyApply: ({ accountId, deliveries, lookback, now }) =>
      ctx.write(() => {
        const resolved: string[] = [];
        for (const d of deliveries) {
          if (deleteWaiter.run(d.waiterId, accountId).changes === 0) continue;
          if (append(accountId, d.runId, [d.step], now)) resolved.push(d.waiterId);
        }
        if (resolved.length === 0 && lookback) {
          const r = run(accountId, lookback.runId);
          const waiting = db
            .prepare("SELECT 1 FROM workflow_waiters WHERE account_id = ? AND run_id = ? AND event_id = ?")
            .get(accountId, lookback.runId, lookback.eventId);
          if (r && r.state === "RUN_STARTED" && !waiting) putEvent.run(accountId, lookback.runId, lookback.eventId, lookback.data, now);
        }
        return resolved;
      }),

    workflowWaiterCount: async () => (waiterCount.get() as { n: number }).n,

    workflowRunCounts: async ({ accountId, since }) => {
      const where: string[] = [];
      const params: unknown[] = [];
      if (accountId !== undefined) {
    where.push("account_id = ?");
    params.push(accountId);
  }
      if (since !== undefined) {
    where.push("created_at >= ?");
    params.push(since);
  }
      const rows = db
        .prepare(
          `SELECT state, COUNT(*) AS n FROM workflow_runs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} GROUP BY state`,
        )
        .all(...params) as { state: RunState; n: number }[];
      const counts = Object.fromEntries(RUN_STATES.map((s) => [s, 0])) as Record<RunState, number>;
      for (const r of rows) counts[r.state] = r.n;
      return counts;
    },

    workflowRetentionDelete: ({ before, limit }) =>
      ctx.write(() => {
        const rows = expired.all(before, limit) as { account_id: string; run_id: string }[];
        for (const r of rows) {
          deleteSteps.run(r.account_id, r.run_id);
          deleteRunWaiters.run(r.account_id, r.run_id);
          deleteRunEvents.run(r.account_id, r.run_id);
          deleteRun.run(r.account_id, r.run_id);
        }
        return rows.length;
      }),
  };
}
