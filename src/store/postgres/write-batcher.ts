import type pg from "pg";
import type { LogEntry } from "../../domain/log.js";
import type { UsageMetric } from "../store.js";
import { classifyError, isRetryableConflict, isUnavailableError } from "./connection.js";
import { recordCommit } from "../../metrics/metrics.js";
import { timerDelay } from "../../domain/timers.js";

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

export type WriteOp<T> = (tx: Tx) => Promise<T>;

/**
 * An operation that may share ONE run with the other operations of the same `kind` in its batch: `runMany` gets
 * their items in arrival order and answers one result per item, so a batch of 100 publishes costs one INSERT instead
 * of 100 round trips (docs/postgres.md, "How the adapter is built"). When the batch has to isolate a failure, each
 * operation runs alone again (`runMany` with one item), so a bad item still fails alone.
 */
export interface MergeableOp<I, R> {
  kind: string;
  item: I;
  runMany: (tx: Tx, items: I[]) => Promise<R[]>;
  /**
   * At most one transaction of this node holds operations of this kind at a time; the next ones wait in the queue
   * and form the next (larger) run. For writes of one node that would otherwise contend for the same row: the
   * publish fast path takes its account's flow-control row, waiting at most 50 ms (migration 021), so of two publish
   * runs of one node in flight together the second would wait for the first's COMMIT or go through the claim.
   */
  oneAtATime?: boolean;
}

/** Writes what the batch's successful operations buffered, just before COMMIT (one statement, see context.ts). */
export type BatchSink = (
  client: pg.PoolClient,
  buffered: { logs: LogEntry[]; usage: UsageRow[]; notifyDue: boolean },
) => Promise<void>;

export interface UsageRow {
  accountId: string;
  minute: number;
  metric: UsageMetric;
  count: number;
  bytes: number;
}

interface Pending {
  op: WriteOp<unknown>;
  merge?: MergeableOp<unknown, unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface OpResult {
  p: Pending;
  ok: boolean;
  value: unknown;
  buffer: OpBuffer;
}

/**
 * The order in which a batch's operations run: one by one, except that in the optimistic run the mergeable ones of
 * one kind run together, at the place of the first of them.
 */
function unitsOf(batch: Pending[], mode: "optimistic" | "savepoints" | "single"): Pending[][] {
  if (mode !== "optimistic") return batch.map((p) => [p]);
  const units: Pending[][] = [];
  const byKind = new Map<string, Pending[]>();
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
class OpBuffer {
  logs: LogEntry[] = [];
  usage: UsageRow[] = [];
  due = false;
}

/** The buffer of an operation whose merged run buffered into its first operation's: never written to. */
const NOTHING_BUFFERED = new OpBuffer();

/** Transactions larger than this are split, so one batch never holds its locks for long. */
const MAX_OPS_PER_COMMIT = 1000;
/** Attempts of one operation that keeps hitting a deadlock or serialization failure. */
const CONFLICT_ATTEMPTS = 5;

/**
 * The pause before running again after a deadlock or serialization failure: random, and longer each time, so that
 * two transactions that collided do not start again in step and collide again. Two nodes claiming and finishing the
 * same keys hit three deadlocks in a row once on a loaded CI machine, with immediate retries.
 */
function conflictPause(tries: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, timerDelay(Math.random() * Math.min(200, 10 * 2 ** tries))));
}

/**
 * Group commit over a pool: write operations issued in the same event-loop turn share one transaction on one pooled
 * connection, so one commit (one WAL flush) covers all of them. Up to `maxBatches` transactions run at once on
 * separate connections; while they are all busy, new operations queue up and form the next, larger batch.
 *
 * Semantics mirror the SQLite WriteBatcher: an operation that throws is rolled back and rejected alone while the
 * others commit, and nothing resolves before COMMIT returned. Cheaply: the batch first runs without savepoints;
 * only when an operation fails is it rolled back and run again with each operation in its own SAVEPOINT.
 * Connection failures reject the whole batch with `unavailable: true` (HTTP 503).
 */
export class PgWriteBatcher {
  private queue: Pending[] = [];
  private scheduled = false;
  private active = 0;
  /** One-at-a-time kinds (MergeableOp.oneAtATime) that a running batch holds. */
  private readonly runningKinds = new Set<string>();
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly sink: BatchSink,
    private readonly maxBatches: number,
  ) {}

  run<T>(op: WriteOp<T>): Promise<T> {
    return this.enqueue({ op: op as WriteOp<unknown> }) as Promise<T>;
  }

  private enqueue(work: Pick<Pending, "op" | "merge">): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      this.queue.push({ ...work, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  /** Like `run`, but the operation may share one run with others of its kind in the batch (see MergeableOp). */
  runMerged<I, R>(m: MergeableOp<I, R>): Promise<R> {
    const merge = m as unknown as MergeableOp<unknown, unknown>;
    return this.enqueue({ op: async (tx) => (await merge.runMany(tx, [merge.item]))[0], merge }) as Promise<R>;
  }

  /** Resolves once every queued and running batch has finished (close()). */
  drain(): Promise<void> {
    if (this.queue.length === 0 && this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.add(resolve));
  }

  private pump(): void {
    while (this.queue.length > 0 && this.active < this.maxBatches) {
      const { batch, kinds } = this.takeBatch();
      if (batch.length === 0) return; // only one-at-a-time kinds wait, for a run in flight: it pumps when done
      for (const kind of kinds) this.runningKinds.add(kind);
      this.active++;
      void this.commit(batch).finally(() => {
        for (const kind of kinds) this.runningKinds.delete(kind);
        this.active--;
        if (this.queue.length > 0) this.pump();
        else if (this.active === 0) {
          for (const resolve of this.idle) resolve();
          this.idle.clear();
        }
      });
    }
  }

  /** The next batch: queued operations in order, but none of a one-at-a-time kind that is running now. */
  private takeBatch(): { batch: Pending[]; kinds: Set<string> } {
    const batch: Pending[] = [];
    const kinds = new Set<string>();
    const rest: Pending[] = [];
    for (const p of this.queue) {
      const kind = p.merge?.oneAtATime ? p.merge.kind : undefined;
      if (batch.length >= MAX_OPS_PER_COMMIT || (kind !== undefined && this.runningKinds.has(kind))) rest.push(p);
      else {
        batch.push(p);
        if (kind !== undefined) kinds.add(kind);
      }
    }
    this.queue = rest;
    return { batch, kinds };
  }

  private async commit(batch: Pending[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const p of batch) p.reject(classifyError(error));
      return;
    }
    // A checked-out client that loses its socket emits 'error'; unhandled, that would end the process.
    let broken: unknown;
    const onError = (error: unknown) => {
      broken = error;
    };
    client.on("error", onError);
    const startedAt = performance.now();
    try {
      for (let tries = 1; ; tries++) {
        try {
          const outcome = await this.attempt(client, batch, batch.length > 1 ? "optimistic" : "single");
          if (outcome === "retry") await this.attempt(client, batch, "savepoints");
          break;
        } catch (error) {
          // A deadlock in the flush or at COMMIT rolled the whole batch back: every operation may simply run again.
          if (broken !== undefined || !isRetryableConflict(error) || tries >= CONFLICT_ATTEMPTS) throw error;
          await client.query("ROLLBACK");
          await conflictPause(tries);
        }
      }
    } catch (error) {
      const failure = classifyError(broken ?? error);
      await client.query("ROLLBACK").catch(() => {});
      for (const p of batch) p.reject(failure);
      client.removeListener("error", onError);
      client.release(isUnavailableError(failure) ? (failure as Error) : undefined);
      return;
    }
    client.removeListener("error", onError);
    client.release(broken instanceof Error ? broken : undefined);
    recordCommit(batch.length, startedAt);
  }

  /**
   * One transaction over the batch. "optimistic" runs the operations back to back and asks for a savepoint run
   * ("retry") at the first failure; "savepoints" isolates each operation; "single" is a batch of one.
   * Resolves or rejects every operation itself once COMMIT returned; throws only for batch-wide failures.
   */
  private async attempt(
    client: pg.PoolClient,
    batch: Pending[],
    mode: "optimistic" | "savepoints" | "single",
  ): Promise<"done" | "retry"> {
    // BEGIN goes out together with the first statement (pipeline mode): one round trip less per batch. It can only
    // fail with the connection, and then every statement after it fails too; it is checked before resolving anyway.
    const begun = client.query("BEGIN");
    begun.catch(() => {});
    const results: OpResult[] = [];
    for (const unit of unitsOf(batch, mode)) {
      if (unit.length > 1) {
        // Merged operations (optimistic mode only): one run for all; a failure isolates them in the savepoint run.
        const buffer = new OpBuffer();
        try {
          const values = await unit[0]!.merge!.runMany(
            txFor(client, buffer),
            unit.map((p) => p.merge!.item),
          );
          // The run's logs and usage are flushed once, with its first operation.
          unit.forEach((p, k) => {
            results.push({ p, ok: true, value: values[k], buffer: k === 0 ? buffer : NOTHING_BUFFERED });
          });
          continue;
        } catch (error) {
          if (isUnavailableError(error)) throw error;
          await client.query("ROLLBACK");
          return "retry";
        }
      }
      const p = unit[0]!;
      let tries = 0;
      for (;;) {
        tries++;
        const buffer = new OpBuffer();
        if (mode === "savepoints") await client.query("SAVEPOINT op");
        try {
          const value = await p.op(txFor(client, buffer));
          if (mode === "savepoints") await client.query("RELEASE SAVEPOINT op");
          results.push({ p, ok: true, value, buffer });
          break;
        } catch (error) {
          if (isUnavailableError(error)) throw error;
          if (mode === "optimistic") {
            await client.query("ROLLBACK");
            return "retry";
          }
          if (mode === "single") {
            await client.query("ROLLBACK");
            if (isRetryableConflict(error) && tries < CONFLICT_ATTEMPTS) {
              await conflictPause(tries);
              await client.query("BEGIN");
              continue;
            }
            p.reject(classifyError(error));
            return "done";
          }
          await client.query("ROLLBACK TO SAVEPOINT op");
          await client.query("RELEASE SAVEPOINT op");
          if (isRetryableConflict(error) && tries < CONFLICT_ATTEMPTS) continue;
          results.push({ p, ok: false, value: classifyError(error), buffer });
          break;
        }
      }
    }
    // Flush and COMMIT go out together (the pool's connections run in pipeline mode): the counters' row locks the
    // flush takes are released without waiting for a round trip through this busy event loop. Other batches, of
    // this node and of others, queue on those rows, so that wait would become everybody's. A failed flush turns
    // the COMMIT into a ROLLBACK on the server.
    const flushed = this.flush(client, results);
    const committed = client.query("COMMIT");
    const [begin, flush, commit] = await Promise.allSettled([begun, flushed, committed]);
    if (begin.status === "rejected") throw begin.reason;
    if (flush.status === "rejected") throw flush.reason;
    if (commit.status === "rejected") throw commit.reason;
    for (const r of results) {
      if (r.ok) r.p.resolve(r.value);
      else r.p.reject(r.value);
    }
    return "done";
  }

  private async flush(client: pg.PoolClient, results: { ok: boolean; buffer: OpBuffer }[]): Promise<void> {
    const logs: LogEntry[] = [];
    const usage = new Map<string, UsageRow>();
    let due = false;
    for (const r of results) {
      if (!r.ok) continue;
      logs.push(...r.buffer.logs);
      due ||= r.buffer.due;
      for (const u of r.buffer.usage) {
        const key = `${u.accountId}\u0000${u.minute}\u0000${u.metric}`;
        const sum = usage.get(key);
        if (sum) {
          sum.count += u.count;
          sum.bytes += u.bytes;
        } else usage.set(key, { ...u });
      }
    }
    if (logs.length === 0 && usage.size === 0 && !due) return;
    // Same order in every batch: two batches updating the same counters cannot deadlock.
    const rows = [...usage.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    await this.sink(client, { logs, usage: rows, notifyDue: due });
  }
}

const queryConfig = (statement: Statement, values: unknown[]) =>
  typeof statement === "string" ? { text: statement, values } : { ...statement, values };

function txFor(client: pg.PoolClient, buffer: OpBuffer): Tx {
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
