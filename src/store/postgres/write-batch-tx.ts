import type pg from "pg";
import type { LogEntry } from "../../domain/log.js";
import { timerDelay } from "../../domain/timers.js";
import type { UsageMetric } from "../store.js";

/* What one operation of a group-commit batch sees (Tx) and the pieces of a batch's run; the batching itself is
 * write-batcher.ts. */

/** A statement: plain text, or named so each connection prepares it once (hot statements). */
export type Statement = string | { name: string; text: string };

/**
 * What a write operation gets: statements run on the batch's connection, inside its transaction. Log entries,
 * usage counts and due-notifications are buffered per operation and written just before COMMIT, only for the
 * operations that succeeded (one multi-row INSERT for all logs of the batch, usage summed per row).
 *
 * An operation may run more than once (a batch that hit a failure runs again with savepoints): it must have no
 * effect outside `tx` and must not keep state between runs. It must not catch a failed statement and go on: after
 * an error PostgreSQL aborts the transaction. Express "insert unless present" with ON CONFLICT instead.
 */
export interface Tx {
  query<R = Record<string, unknown>>(statement: Statement, values?: unknown[]): Promise<R[]>;
  /** Runs a statement for its row count (UPDATE/DELETE without RETURNING). */
  execute(statement: Statement, values?: unknown[]): Promise<number>;
  insertLog(entry: LogEntry): void;
  addUsage(accountId: string, now: number, metric: UsageMetric, count: number, bytes: number): void;
  /** Messages became due (or due soon): other nodes are woken by NOTIFY after COMMIT. */
  notifyDue(): void;
}

export interface UsageRow {
  accountId: string;
  minute: number;
  metric: UsageMetric;
  count: number;
  bytes: number;
}

/**
 * The order in which a batch's operations run: one by one, except that in the optimistic run the mergeable ones of
 * one kind run together, at the place of the first of them.
 */
export function unitsOf<P extends { merge?: { kind: string } }>(
  batch: P[],
  mode: "optimistic" | "savepoints" | "single",
): P[][] {
  if (mode !== "optimistic") return batch.map((p) => [p]);
  const units: P[][] = [];
  const byKind = new Map<string, P[]>();
  for (const p of batch) {
    if (!p.merge) {
      units.push([p]);
      continue;
    }
    const unit = byKind.get(p.merge.kind);
    if (unit) unit.push(p);
    else {
      const fresh = [p];
      byKind.set(p.merge.kind, fresh);
      units.push(fresh);
    }
  }
  return units;
}

/** What one run of one operation buffered. */
export class OpBuffer {
  logs: LogEntry[] = [];
  usage: UsageRow[] = [];
  due = false;
}

/** The buffer of an operation whose merged run buffered into its first operation's: never written to. */
export const NOTHING_BUFFERED = new OpBuffer();

/** Transactions larger than this are split, so one batch never holds its locks for long. */
export const MAX_OPS_PER_COMMIT = 1000;
/** Attempts of one operation that keeps hitting a deadlock or serialization failure. */
export const CONFLICT_ATTEMPTS = 5;

/**
 * The pause before running again after a deadlock or serialization failure: random, and longer each time, so that
 * two transactions that collided do not start again in step and collide again. Two nodes claiming and finishing the
 * same keys hit three deadlocks in a row once on a loaded CI machine, with immediate retries.
 */
export function conflictPause(tries: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, timerDelay(Math.random() * Math.min(200, 10 * 2 ** tries))));
}
const queryConfig = (statement: Statement, values: unknown[]) =>
  typeof statement === "string" ? { text: statement, values } : { ...statement, values };

export function txFor(client: pg.PoolClient, buffer: OpBuffer): Tx {
  return {
    query: async <R>(statement: Statement, values: unknown[] = []) =>
      (await client.query(queryConfig(statement, values))).rows as R[],
    execute: async (statement, values = []) => (await client.query(queryConfig(statement, values))).rowCount ?? 0,
    insertLog: (entry) => {
      buffer.logs.push(entry);
    },
    addUsage: (accountId, now, metric, count, bytes) => {
      buffer.usage.push({ accountId, minute: now - (now % 60_000), metric, count, bytes });
    },
    notifyDue: () => {
      buffer.due = true;
    },
  };
}
