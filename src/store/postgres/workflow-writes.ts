import { type HistoryEntry, type StepDelivery, withRunConfig, type WorkflowRun } from "../../domain/workflow.js";
import type { InsertItem, InsertResult } from "../store-params.js";
import type { RunEnd, StepAppend } from "../workflow-store.js";
import { endFollowUp, type RunRow, runFromRow, type StepRow, stepFromRow } from "../workflow-rows.js";
import type { Tx } from "./context.js";

/**
 * The workflow writes other writes share (mirrors src/store/sqlite/workflow-writes.ts): appending to a run and
 * ending one, inside a write's transaction. Every change to a run first locks its row (`FOR UPDATE`), so appends to
 * one run from several nodes are applied one at a time, each at the next position, and a run that ended accepts
 * nothing more: two nodes never both apply a step (docs/workflows.md "Several nodes").
 */
export interface PgWorkflowWrites {
  lockRun(tx: Tx, accountId: string, runId: string): Promise<RunRow | undefined>;
  run(tx: Tx | undefined, accountId: string, runId: string): Promise<WorkflowRun | undefined>;
  appendLocked(tx: Tx, row: RunRow, list: StepAppend[], now: number): Promise<InsertResult[]>;
  append(tx: Tx, accountId: string, runId: string, list: StepAppend[], now: number): Promise<InsertResult[] | undefined>;
  /** The delivery of a single appended step inserted leased to this node, read in the append's transaction. */
  leasedDelivery(tx: Tx, row: RunRow, results: InsertResult[]): Promise<StepDelivery | undefined>;
  /** Ends a started run: its row as ended, and whether a follow-up was appended; undefined when it was not started. */
  end(tx: Tx, p: RunEnd): Promise<{ row: RunRow; followedUp: boolean } | undefined>;
  historyOf(tx: Tx | undefined, accountId: string, runId: string): Promise<HistoryEntry[]>;
  deleteRunRows(tx: Tx, accountId: string, runId: string, withRun: boolean): Promise<void>;
}

/**
 * Inserts new messages inside a write (`tx`): deduplication keys, rows (standing for their CREATED entries:
 * docs/states.md "The message row"), usage. Shared by every write
 * that creates messages (publish, callbacks, schedule ticks), so each gets the same rules.
 * Defined here, beside its one other user, so messages.ts and this file do not import each other.
 */
export type MessageInserter = (tx: Tx, items: InsertItem[], now: number, windowMs: number) => Promise<InsertResult[]>;

export function pgWorkflowWrites(
  read: <R>(text: string, values: unknown[]) => Promise<R[]>,
  insertNew: MessageInserter,
): PgWorkflowWrites {
  const q = <R>(tx: Tx | undefined, text: string, values: unknown[]) =>
    tx ? tx.query<R>(text, values) : read<R>(text, values);

  const lockRun = async (tx: Tx, accountId: string, runId: string) =>
    (
      await tx.query<RunRow>("SELECT * FROM workflow_runs WHERE account_id = $1 AND run_id = $2 FOR UPDATE", [
        accountId,
        runId,
      ])
    )[0];

  const appendLocked = async (tx: Tx, row: RunRow, list: StepAppend[], now: number) => {
    let position = row.step_count;
    let config: WorkflowRun["config"] | undefined;
    const items = [];
    for (const s of list) {
      const m = s.item.message;
      await tx.execute(
        `INSERT INTO workflow_steps (account_id, run_id, position, message_id, call_type, body, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [row.account_id, row.run_id, position++, m.id, s.callType, m.body ?? Buffer.alloc(0), now],
      );
      if (!s.runConfig) {
        items.push(s.item);
        continue;
      }
      // The run's settings, from the row locked for the append (contract §4.2).
      config ??= runFromRow(row).config;
      items.push({ ...s.item, message: { ...m, spec: withRunConfig(m.spec, config, s.runConfig.ownRetries) } });
    }
    await tx.execute(
      "UPDATE workflow_runs SET step_count = $1, updated_at = $2 WHERE account_id = $3 AND run_id = $4",
      [position, now, row.account_id, row.run_id],
    );
    row.step_count = position;
    const results = await insertNew(tx, items, now, 0);
    tx.addUsage(row.account_id, now, "workflow_message", list.length, 0);
    return results;
  };

  const deleteRunRows = async (tx: Tx, accountId: string, runId: string, withRun: boolean) => {
    await tx.execute("DELETE FROM workflow_waiters WHERE account_id = $1 AND run_id = $2", [accountId, runId]);
    await tx.execute("DELETE FROM workflow_events WHERE account_id = $1 AND run_id = $2", [accountId, runId]);
    if (withRun) {
      await tx.execute("DELETE FROM workflow_steps WHERE account_id = $1 AND run_id = $2", [accountId, runId]);
      await tx.execute("DELETE FROM workflow_runs WHERE account_id = $1 AND run_id = $2", [accountId, runId]);
    }
  };

  const w: PgWorkflowWrites = {
    lockRun,
    run: async (tx, accountId, runId) => {
      const [row] = await q<RunRow>(tx, "SELECT * FROM workflow_runs WHERE account_id = $1 AND run_id = $2", [
        accountId,
        runId,
      ]);
      return row ? runFromRow(row) : undefined;
    },
    appendLocked,
    leasedDelivery: async (tx, row, results) => {
      if (results.length !== 1 || results[0]!.message?.leaseOwner === undefined) return undefined;
      // Under the run's lock: the entry just written is the history's last (docs/workflows.md "Deliveries").
      return { run: runFromRow(row), history: await w.historyOf(tx, row.account_id, row.run_id) };
    },
    append: async (tx, accountId, runId, list, now) => {
      const row = await lockRun(tx, accountId, runId);
      if (!row || row.state !== "RUN_STARTED") return undefined;
      return appendLocked(tx, row, list, now);
    },
    end: async (tx, p) => {
      // The UPDATE locks the run's row; under READ COMMITTED its `state` condition is checked again once the lock is
      // held, so of two nodes ending one run only one ends it. RETURNING: the ended run, without another read.
      const [row] = await tx.query<RunRow>(
        `UPDATE workflow_runs SET state = $1, result = $2, dlq_id = $3, completed_at = $4, updated_at = $4,
           failure_message_id = $7
         WHERE account_id = $5 AND run_id = $6 AND state = 'RUN_STARTED' RETURNING *`,
        [p.state, p.result ?? null, p.dlqId ?? null, p.now, p.accountId, p.runId, p.failureMessageId ?? null],
      );
      if (!row) return undefined;
      await deleteRunRows(tx, p.accountId, p.runId, false);
      const followUp = endFollowUp(p, row);
      const followedUp =
        followUp !== undefined && (await w.append(tx, followUp.accountId, followUp.runId, [followUp.step], p.now)) !== undefined;
      return { row, followedUp };
    },
    historyOf: async (tx, accountId, runId) =>
      (
        await q<StepRow>(
          tx,
          `SELECT message_id, call_type, body, created_at FROM workflow_steps
           WHERE account_id = $1 AND run_id = $2 ORDER BY position`,
          [accountId, runId],
        )
      ).map(stepFromRow),
    deleteRunRows,
  };
  return w;
}
