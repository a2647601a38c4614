import type { Logger } from "pino";
import type { Clock } from "../domain/clock.js";
import { statsPeriods } from "../domain/stats-period.js";
import type { RetentionTable } from "../store/retention-store.js";
import type { Store } from "../store/store.js";
import { IntervalLoop, type Loop } from "./loop.js";

/**
 * Rows per delete statement: small enough that one chunk takes a few milliseconds, so the publishes that share its
 * transaction (SQLite group commit) or wait for a connection (PostgreSQL) are barely delayed.
 */
export const RETENTION_CHUNK = 1000;

const DAY_MS = 86_400_000;

/** Usage counters are kept for the longest statistics period plus one step (the first point is step-aligned). */
export const USAGE_RETENTION_MS = Math.max(...Object.values(statsPeriods).map((p) => p.stepMs * (p.points + 1)));

/** Lets publishes and deliveries run between two chunks (the loop runs on the event loop that serves them). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Deletes every row of `table` older than `before`, chunk by chunk, yielding between chunks. It stops only when a
 * chunk comes back short, so one pass removes everything that expired before it started, whatever the rate rows
 * arrived at (docs/operations.md "Table bounds").
 */
export async function deleteAllBefore(
  store: Store,
  table: RetentionTable,
  before: number,
  chunk = RETENTION_CHUNK,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await store.retentionDelete({ table, before, limit: chunk });
    total += deleted;
    if (deleted < chunk) return total;
    await nextTurn();
  }
}

/**
 * The retention loop: log entries past FERRY_LOG_RETENTION_MS and message rows that ended before it (kept for their
 * log, docs/states.md "The message row"), expired deduplication keys, usage counters older
 * than the longest statistics period, and daily quota counters before yesterday (the quota path keeps yesterday for
 * a node whose clock lags). Each pass works from the store alone, so any number of nodes may run it at once.
 * `runOnce()` resolves to the rows deleted per table.
 */
export function retentionLoop(p: {
  store: Store;
  clock: Clock;
  log: Logger;
  logRetentionMs: number;
  /** How often a pass runs. (Default: 60000 ms) */
  intervalMs?: number;
  chunk?: number;
}): Loop {
  const pass = async (): Promise<Record<RetentionTable | "workflow_runs", number>> => {
    const now = p.clock.now();
    const today = now - (now % DAY_MS);
    const cutoffs: Record<RetentionTable, number> = {
      logs: now - p.logRetentionMs,
      messages: now - p.logRetentionMs,
      dedup: now,
      usage: now - USAGE_RETENTION_MS,
      request_quota: today - DAY_MS,
    };
    const deleted = { logs: 0, messages: 0, dedup: 0, usage: 0, request_quota: 0 };
    for (const table of Object.keys(cutoffs) as RetentionTable[]) {
      deleted[table] = await deleteAllBefore(p.store, table, cutoffs[table], p.chunk);
    }
    // Ended workflow runs stay visible as long as the logs (docs/workflows.md "Retention"), then go with their
    // history, waiters and early events; started runs are never deleted.
    let workflowRuns = 0;
    for (;;) {
      const chunk = p.chunk ?? RETENTION_CHUNK;
      const n = await p.store.workflowRetentionDelete({ before: now - p.logRetentionMs, limit: chunk });
      workflowRuns += n;
      if (n < chunk) break;
      await nextTurn();
    }
    const all = { ...deleted, workflow_runs: workflowRuns };
    if (Object.values(all).some((n) => n > 0)) p.log.debug({ deleted: all }, "retention pass");
    return all;
  };
  return new IntervalLoop("retention", p.intervalMs ?? 60_000, pass, p.log);
}
