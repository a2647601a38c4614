import type { InsertItem, InsertResult } from "../store.js";
import { type HistoryEntry, type StepDelivery, withRunConfig, type WorkflowRun } from "../../domain/workflow.js";
import type { RunEnd, StepAppend } from "../workflow-store.js";
import { endFollowUp, RUN_INSERT_COLUMNS, type RunRow, runFromRow, type StepRow, stepFromRow } from "../workflow-rows.js";
import type { SqliteContext } from "./context.js";

/**
 * The workflow writes other writes share (synchronous: call them inside `ctx.write`): appending to a run and ending
 * one. `messageFinish` ends a run whose step failed for good in its own transaction, so it gets these too; the
 * message inserter is passed in to keep messages.ts and this file free of an import cycle.
 */
export function workflowWrites(
  ctx: SqliteContext,
  insertNew: (items: InsertItem[], now: number, windowMs: number) => InsertResult[],
) {
  const { db } = ctx;
  const getRun = db.prepare("SELECT * FROM workflow_runs WHERE account_id = ? AND run_id = ?");
  const insertRun = db.prepare(
    `INSERT INTO workflow_runs (${RUN_INSERT_COLUMNS.join(", ")}) VALUES (${RUN_INSERT_COLUMNS.map(() => "?").join(", ")})`,
  );
  const deleteRun = db.prepare("DELETE FROM workflow_runs WHERE account_id = ? AND run_id = ?");
  const insertStep = db.prepare(
    `INSERT INTO workflow_steps (account_id, run_id, position, message_id, call_type, body, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const bumpSteps = db.prepare(
    "UPDATE workflow_runs SET step_count = step_count + 1, updated_at = ? WHERE account_id = ? AND run_id = ?",
  );
  const setSteps = db.prepare("UPDATE workflow_runs SET step_count = ?, updated_at = ? WHERE account_id = ? AND run_id = ?");
  const steps = db.prepare(
    "SELECT message_id, call_type, body, created_at FROM workflow_steps WHERE account_id = ? AND run_id = ? ORDER BY position",
  );
  const deleteSteps = db.prepare("DELETE FROM workflow_steps WHERE account_id = ? AND run_id = ?");
  // RETURNING: the ended run as it is now, without reading it before or after.
  const endRun = db.prepare(
    `UPDATE workflow_runs SET state = ?, result = ?, dlq_id = ?, failure_message_id = ?, completed_at = ?, updated_at = ?
     WHERE account_id = ? AND run_id = ? AND state = 'RUN_STARTED' RETURNING *`,
  );
  const insertWaiter = db.prepare(
    `INSERT INTO workflow_waiters (waiter_id, account_id, event_id, run_id, deadline, created_at, timeout_message_id,
       waiter) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const deleteWaiter = db.prepare("DELETE FROM workflow_waiters WHERE waiter_id = ? AND account_id = ?");
  const deleteRunWaiters = db.prepare("DELETE FROM workflow_waiters WHERE account_id = ? AND run_id = ?");
  const waitersOfEvent = db.prepare("SELECT waiter FROM workflow_waiters WHERE account_id = ? AND event_id = ? ORDER BY created_at");
  const waiterCount = db.prepare("SELECT COUNT(*) AS n FROM workflow_waiters");
  const getEvent = db.prepare("SELECT data FROM workflow_events WHERE account_id = ? AND run_id = ? AND event_id = ?");
  const deleteEvent = db.prepare("DELETE FROM workflow_events WHERE account_id = ? AND run_id = ? AND event_id = ?");
  const putEvent = db.prepare(
    `INSERT INTO workflow_events (account_id, run_id, event_id, data, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (account_id, run_id, event_id) DO UPDATE SET data = excluded.data, created_at = excluded.created_at`,
  );
  const deleteRunEvents = db.prepare("DELETE FROM workflow_events WHERE account_id = ? AND run_id = ?");
  const expired = db.prepare("SELECT account_id, run_id FROM workflow_runs WHERE completed_at < ? ORDER BY completed_at LIMIT ?");

  const run = (accountId: string, runId: string): WorkflowRun | undefined => {
    const row = getRun.get(accountId, runId) as RunRow | undefined;
    return row ? runFromRow(row) : undefined;
  };

  /**
   * Appends to a started run (SQLite's one writer serialises appends); undefined when the run is not started. Steps
   * that ask for the run's settings get them here, from the row the append read.
   */
  const appendRun = (
    accountId: string,
    runId: string,
    list: StepAppend[],
    now: number,
  ): { results: InsertResult[]; row: RunRow } | undefined => {
    const row = getRun.get(accountId, runId) as RunRow | undefined;
    if (!row || row.state !== "RUN_STARTED") return undefined;
    let position = row.step_count;
    let config: WorkflowRun["config"] | undefined;
    const items = list.map((s) => {
      const m = s.item.message;
      insertStep.run(accountId, runId, position++, m.id, s.callType, m.body ?? Buffer.alloc(0), now);
      if (!s.runConfig) return s.item;
      config ??= JSON.parse(row.config) as WorkflowRun["config"];
      return { ...s.item, message: { ...m, spec: withRunConfig(m.spec, config, s.runConfig.ownRetries) } };
    });
    setSteps.run(position, now, accountId, runId);
    const results = insertNew(items, now, 0);
    ctx.addUsage(accountId, now, "workflow_message", list.length, 0);
    return { results, row };
  };

  const append = (accountId: string, runId: string, list: StepAppend[], now: number): InsertResult[] | undefined =>
    appendRun(accountId, runId, list, now)?.results;

  /**
   * The delivery of a single appended step that was inserted leased to this node (the publish fast path): read in the
   * append's transaction, its entry is the history's last (docs/workflows.md "Deliveries").
   */
  const leasedDelivery = (row: RunRow, results: InsertResult[]): StepDelivery | undefined => {
    if (results.length !== 1 || results[0]!.message?.leaseOwner === undefined) return undefined;
    return { run: runFromRow(row), history: historyOf(row.account_id, row.run_id) };
  };

  /**
   * Ends a started run, removes its waiters and applies the follow-up; answers the ended run's row (and whether a
   * follow-up was appended), or undefined when it was not started.
   */
  const end = (p: RunEnd): { row: RunRow; followedUp: boolean } | undefined => {
    const row = endRun.get(p.state, p.result ?? null, p.dlqId ?? null, p.failureMessageId ?? null, p.now, p.now, p.accountId, p.runId) as
      | RunRow
      | undefined;
    if (!row) return undefined;
    deleteRunWaiters.run(p.accountId, p.runId);
    deleteRunEvents.run(p.accountId, p.runId);
    const followUp = endFollowUp(p, row);
    const followedUp = followUp !== undefined && append(followUp.accountId, followUp.runId, [followUp.step], p.now) !== undefined;
    return { row, followedUp };
  };

  const historyOf = (accountId: string, runId: string): HistoryEntry[] =>
    (steps.all(accountId, runId) as StepRow[]).map(stepFromRow);

  return {
    getRun,
    insertRun,
    deleteRun,
    insertStep,
    bumpSteps,
    deleteSteps,
    insertWaiter,
    deleteWaiter,
    deleteRunWaiters,
    waitersOfEvent,
    waiterCount,
    getEvent,
    deleteEvent,
    putEvent,
    deleteRunEvents,
    expired,
    run,
    append,
    appendRun,
    leasedDelivery,
    end,
    historyOf,
    insertNew,
  };
}
