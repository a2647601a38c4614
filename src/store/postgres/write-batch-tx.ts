import type { LogEntry } from "../../domain/log.js";
import { timerDelay } from "../../domain/timers.js";
import type { TokenCheck, UsageMetric } from "../store.js";
import type { Statement } from "./compose.js";
import type { Pipe } from "./pipe.js";

/* What one operation of a group-commit batch sees (Tx) and the pieces of a batch's run; the batching itself is
 * write-batcher.ts. */

export type { Statement } from "./compose.js";

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
  /**
   * Runs a statement whose rows the operation does not need. In a pipelined run (`pipelined`) it is only sent: it
   * leaves together with the rest of the transaction and its COMMIT (composed with them into one statement when it
   * is a ComposableStatement and so are they, compose.ts), and is checked once they are answered; if it
   * failed, nothing was committed and the whole batch runs again, not pipelined, where `defer` waits for its
   * statement like `execute`. So a deferred statement may also check a premise the operation took for granted and
   * fail when it does not hold (`ferry_expect`, migration 069).
   */
  defer(statement: Statement, values?: unknown[]): Promise<void>;
  /**
   * True in a batch's first run: statements sent with `defer` are checked only at COMMIT, so an operation may
   * assume what it would otherwise read first and check it with a deferred statement (docs/postgres.md, "One round
   * trip per transaction"). False when the batch runs again after a failure.
   */
  readonly pipelined: boolean;
  insertLog(entry: LogEntry): void;
  addUsage(accountId: string, now: number, metric: UsageMetric, count: number, bytes: number): void;
  /** Messages became due (or due soon): other nodes are woken by NOTIFY after COMMIT. */
  notifyDue(): void;
  /**
   * Pipelined runs only: the batch's flush statement checks that this token still holds (token-check.ts) and fails
   * the transaction otherwise, so the batch runs again not pipelined.
   */
  checkTokenAtFlush(check: TokenCheck): void;
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
  tokenChecks: TokenCheck[] = [];
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
export function txFor(pipe: Pipe, buffer: OpBuffer, pipelined: boolean): Tx {
  return {
    pipelined,
    query: async <R>(statement: Statement, values: unknown[] = []) => (await pipe.query(statement, values)).rows as R[],
    execute: async (statement, values = []) => (await pipe.query(statement, values)).rowCount ?? 0,
    defer: async (statement, values = []) => {
      if (!pipelined) {
        await pipe.query(statement, values);
        return;
      }
      const sent = pipe.sendLater(statement, values);
      sent.catch(() => {}); // checked by the batch (Pipe.deferredFailure), never unhandled
      pipe.deferred.push(sent);
    },
    insertLog: (entry) => {
      buffer.logs.push(entry);
    },
    addUsage: (accountId, now, metric, count, bytes) => {
      buffer.usage.push({ accountId, minute: now - (now % 60_000), metric, count, bytes });
    },
    notifyDue: () => {
      buffer.due = true;
    },
    checkTokenAtFlush: (check) => {
      buffer.tokenChecks.push(check);
    },
  };
}
