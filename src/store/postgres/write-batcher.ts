import type pg from "pg";
import type { LogEntry } from "../../domain/log.js";
import { classifyError, isExpectFailure, isRetryableConflict, isUnavailableError } from "./connection.js";
import type { TokenCheck } from "../store.js";
import { recordCommit } from "../../metrics/metrics.js";
import { timerDelay } from "../../domain/timers.js";
import { Pipe } from "./pipe.js";
import {
  CONFLICT_ATTEMPTS,
  conflictPause,
  MAX_OPS_PER_COMMIT,
  NOTHING_BUFFERED,
  OpBuffer,
  type Tx,
  txFor,
  type UsageRow,
  unitsOf,
} from "./write-batch-tx.js";

export type { Statement, Tx, UsageRow } from "./write-batch-tx.js";

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
  /**
   * Nobody waits on this operation to answer a client (a delivery's outcome): it does not start a transaction of its
   * own while other work will soon start one, and rides along with that (publishes, claims). It waits for about
   * one and a half of its node's intervals between one-at-a-time runs (the publish runs: with more nodes sharing
   * the load they come less often), at least `lazyWaitMs` and at most MAX_LAZY_WAIT_MS, so its row leaves ACTIVE and
   * its delivery slot frees shortly after. Until it commits, a crash only means the message is delivered again.
   */
  lazy?: boolean;
}

/** Writes what the batch's successful operations buffered, just before COMMIT (one statement, see context.ts). */
export type BatchSink = (
  pipe: Pipe,
  buffered: { logs: LogEntry[]; usage: UsageRow[]; notifyDue: boolean; tokenChecks: TokenCheck[] },
) => Promise<void>;

/** The least a lazy operation (MergeableOp.lazy) waits for other work to ride along with, by default. */
export const LAZY_WAIT_MS = 10;
/** The most it waits, however rare the publish runs (unless `lazyWaitMs` asks for longer). */
const MAX_LAZY_WAIT_MS = 50;
/** The most a busy node's next publish run waits to gather publishes, by default (PgWriteBatcher.gatherUntil). */
export const GATHER_MS = 5;
/** Weight of a new interval in the moving average of the intervals between one-at-a-time runs. */
const INTERVAL_WEIGHT = 0.2;
/** Lazy operations this many start their own transaction at once. */
const LAZY_ENOUGH = 256;

interface Pending {
  op: WriteOp<unknown>;
  merge?: MergeableOp<unknown, unknown>;
  /** When it was queued (performance.now()): lazy operations wait from then. */
  at: number;
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
 * Group commit over a pool: write operations issued in the same event-loop turn share one transaction on one pooled
 * connection, so one commit (one WAL flush) covers all of them. Up to `maxBatches` transactions run at once on
 * separate connections; while they are all busy, new operations queue up and form the next, larger batch.
 *
 * Semantics mirror the SQLite WriteBatcher: an operation that throws is rolled back and rejected alone while the
 * others commit, and nothing resolves before COMMIT returned. Cheaply: the batch first runs without savepoints;
 * only when an operation fails is it rolled back and run again with each operation in its own SAVEPOINT.
 * Connection failures reject the whole batch with `unavailable: true` (HTTP 503).
 *
 * Lazy operations (plain deliveries' outcomes) wait a little to ride along with the next transaction instead of
 * committing alone (docs/postgres.md, "Group commit across nodes").
 */
export class PgWriteBatcher {
  private queue: Pending[] = [];
  private scheduled = false;
  private active = 0;
  /** One-at-a-time kinds (MergeableOp.oneAtATime) that a running batch holds. */
  private readonly runningKinds = new Set<string>();
  private readonly idle = new Set<() => void>();
  /** A pump armed for when waiting lazy operations may go alone. */
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private draining = false;
  /** When the last one-at-a-time run started, and the moving average of the intervals between them (ms). */
  private lastRunAt: number | undefined;
  private runInterval = 0;
  /**
   * Gathering (`gatherMs`): the last one-at-a-time run's operations, when it ended, how many of its kind were queued
   * then, and the moving average of such runs' durations (ms).
   */
  private lastRunOps = 0;
  private lastRunEnd = 0;
  private queuedAtEnd = 0;
  private runDuration = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly sink: BatchSink,
    private readonly maxBatches: number,
    private readonly lazyWaitMs = LAZY_WAIT_MS,
    /** The most a busy node's next publish run waits to gather its publishes (0: never). See gatherUntil. */
    private readonly gatherMs = GATHER_MS,
  ) {}

  run<T>(op: WriteOp<T>): Promise<T> {
    return this.enqueue({ op: op as WriteOp<unknown> }) as Promise<T>;
  }

  private enqueue(work: Pick<Pending, "op" | "merge">): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      this.queue.push({ ...work, at: performance.now(), resolve, reject });
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
    this.draining = true; // nothing waits any more: lazy waits would only delay the close
    this.pump();
    if (this.queue.length === 0 && this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.add(resolve));
  }

  private pump(): void {
    while (this.queue.length > 0 && this.active < this.maxBatches) {
      const { batch, kinds, wakeAt } = this.takeBatch(performance.now());
      if (batch.length === 0) {
        // Only waiting operations: one-at-a-time kinds of a run in flight (it pumps when done), or lazy ones whose
        // time has not come (a timer pumps then).
        if (wakeAt !== undefined) this.armPump(wakeAt);
        return;
      }
      for (const kind of kinds) this.runningKinds.add(kind);
      const startedAt = performance.now();
      if (kinds.size > 0) this.noteRun(startedAt);
      this.active++;
      void this.commit(batch).finally(() => {
        for (const kind of kinds) this.runningKinds.delete(kind);
        if (kinds.size > 0) this.noteRunEnd(batch, startedAt);
        this.active--;
        if (this.queue.length > 0) this.pump();
        else if (this.active === 0) {
          for (const resolve of this.idle) resolve();
          this.idle.clear();
        }
      });
    }
  }

  private noteRunEnd(batch: Pending[], startedAt: number): void {
    const now = performance.now();
    this.lastRunOps = batch.reduce((n, p) => n + (p.merge?.oneAtATime ? 1 : 0), 0);
    this.queuedAtEnd = this.queue.reduce((n, p) => n + (p.merge?.oneAtATime ? 1 : 0), 0);
    this.lastRunEnd = now;
    this.runDuration += INTERVAL_WEIGHT * (now - startedAt - this.runDuration);
  }

  private noteRun(now: number): void {
    if (this.lastRunAt !== undefined) {
      // An idle spell is not an interval between runs of a busy node: capped so that it does not linger.
      const interval = Math.min(now - this.lastRunAt, 2 * MAX_LAZY_WAIT_MS);
      this.runInterval += INTERVAL_WEIGHT * (interval - this.runInterval);
    }
    this.lastRunAt = now;
  }

  /**
   * How long lazy operations wait for a ride: one and a half of this node's mean interval between publish runs, so
   * that the next run usually comes first, whether one node takes all the publishes or a third of them.
   */
  private lazyWait(): number {
    return Math.max(this.lazyWaitMs, Math.min(MAX_LAZY_WAIT_MS, 1.5 * this.runInterval));
  }

  private armPump(at: number): void {
    if (this.timer !== undefined && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.pump();
    }, timerDelay(at - performance.now()));
  }

  /**
   * The next batch: queued operations in order, but none of a one-at-a-time kind that is running now, and lazy ones
   * only together with other work or once they waited long enough. `wakeAt`: when lazy ones left waiting may go.
   */
  private takeBatch(now: number): { batch: Pending[]; kinds: Set<string>; wakeAt?: number } {
    const batch: Pending[] = [];
    const kinds = new Set<string>();
    const rest: Pending[] = [];
    /** Operations of a one-at-a-time kind wait for their run in flight, which pumps when done. */
    let heldBack = false;
    let eager = false;
    let lazyFrom = Number.POSITIVE_INFINITY;
    const gatherUntil = this.gatherUntil(now);
    for (const p of this.queue) {
      const kind = p.merge?.oneAtATime ? p.merge.kind : undefined;
      if (
        batch.length >= MAX_OPS_PER_COMMIT ||
        (kind !== undefined && (this.runningKinds.has(kind) || gatherUntil !== undefined))
      ) {
        heldBack ||= kind !== undefined;
        rest.push(p);
        continue;
      }
      batch.push(p);
      if (kind !== undefined) kinds.add(kind);
      if (p.merge?.lazy) lazyFrom = Math.min(lazyFrom, p.at);
      else eager = true;
    }
    // Lazy operations alone wait for other work to ride along with: the publishes queued behind the run in flight
    // (one transaction away), or whatever comes within their own wait.
    if (!eager && batch.length > 0 && !this.draining && batch.length < LAZY_ENOUGH) {
      if (heldBack) return { batch: [], kinds: new Set(), ...(gatherUntil !== undefined ? { wakeAt: gatherUntil } : {}) };
      const deadline = lazyFrom + this.lazyWait();
      if (now < deadline) return { batch: [], kinds: new Set(), wakeAt: deadline };
    }
    this.queue = rest;
    return batch.length === 0 && gatherUntil !== undefined ? { batch, kinds, wakeAt: gatherUntil } : { batch, kinds };
  }

  /**
   * Gathering (docs/postgres.md "Gathering publish runs"): when the node is busy (its last publish run held more than
   * one publish), its next run waits until as many publishes are queued as it last had outstanding (the last run's
   * and those queued at its end), but no longer than one mean run duration, at most `gatherMs`, after the last run
   * ended. So a busy node commits about half as often, each commit holding about twice the publishes: with three
   * nodes sharing the load each node's runs are a third as full, and the database's transactions per message would
   * otherwise grow with the nodes. An idle node never waits (the wait counts from the last run's end), nor one whose
   * runs hold a single publish (the latency of a light load). Returns when the held run may go, or undefined: now.
   */
  private gatherUntil(now: number): number | undefined {
    if (this.gatherMs <= 0 || this.draining || this.lastRunOps <= 1) return undefined;
    const until = this.lastRunEnd + Math.min(this.gatherMs, this.runDuration);
    if (now >= until) return undefined;
    let queued = 0;
    for (const p of this.queue) if (p.merge?.oneAtATime) queued++;
    return queued === 0 || queued >= this.lastRunOps + this.queuedAtEnd ? undefined : until;
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
          const mode = batch.length > 1 ? "optimistic" : "single";
          // Pipelined first; a deferred statement that failed (a premise that no longer held) runs it again with
          // every statement awaited, and a failed operation isolates the others in the savepoint run.
          let outcome = await this.attempt(client, batch, mode, true);
          if (outcome === "careful") outcome = await this.attempt(client, batch, mode, false);
          if (outcome === "retry") await this.attempt(client, batch, "savepoints", false);
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
   * ("retry") at the first failure; "savepoints" isolates each operation; "single" is a batch of one. `pipelined`:
   * the operations' deferred statements (Tx.defer) leave with the COMMIT; if one failed, nothing was committed and
   * the batch asks to run again not pipelined ("careful").
   * Resolves or rejects every operation itself once COMMIT returned; throws only for batch-wide failures.
   */
  private async attempt(
    client: pg.PoolClient,
    batch: Pending[],
    mode: "optimistic" | "savepoints" | "single",
    pipelined: boolean,
  ): Promise<"done" | "retry" | "careful"> {
    const piped = pipelined && mode !== "savepoints";
    const pipe = new Pipe(client, piped);
    try {
      return await this.attemptOn(pipe, batch, mode, piped);
    } finally {
      pipe.flush(); // never leave the connection holding back writes
    }
  }

  private async attemptOn(
    pipe: Pipe,
    batch: Pending[],
    mode: "optimistic" | "savepoints" | "single",
    pipelined: boolean,
  ): Promise<"done" | "retry" | "careful"> {
    // BEGIN goes out together with the first statement (one write): one round trip less per batch; in a pipelined
    // run only if a statement cannot wait to be composed (pipe.ts). It can only fail with the
    // connection, and then every statement after it fails too; it is checked before resolving anyway.
    const begun = pipe.begin();
    begun.catch(() => {});
    /**
     * An operation failed: when a deferred statement sent before it failed, that failure aborted the transaction
     * (the operation's error is only its echo) and the batch runs again not pipelined.
     */
    const deferredFirst = async (): Promise<"careful" | undefined> => {
      const cause = await pipe.deferredFailure();
      if (cause === undefined) return undefined;
      if (isUnavailableError(cause) || isRetryableConflict(cause)) throw cause;
      await pipe.rollback();
      return "careful";
    };
    const results: OpResult[] = [];
    for (const unit of unitsOf(batch, mode)) {
      if (unit.length > 1) {
        // Merged operations (optimistic mode only): one run for all; a failure isolates them in the savepoint run.
        const buffer = new OpBuffer();
        try {
          const values = await unit[0]!.merge!.runMany(
            txFor(pipe, buffer, pipelined),
            unit.map((p) => p.merge!.item),
          );
          // The run's logs and usage are flushed once, with its first operation.
          unit.forEach((p, k) => {
            results.push({ p, ok: true, value: values[k], buffer: k === 0 ? buffer : NOTHING_BUFFERED });
          });
          continue;
        } catch (error) {
          if ((await deferredFirst()) === "careful") return "careful";
          if (isUnavailableError(error)) throw error;
          await pipe.rollback();
          return "retry";
        }
      }
      const p = unit[0]!;
      let tries = 0;
      for (;;) {
        tries++;
        const buffer = new OpBuffer();
        if (mode === "savepoints") await pipe.query("SAVEPOINT op");
        try {
          const value = await p.op(txFor(pipe, buffer, pipelined));
          if (mode === "savepoints") await pipe.query("RELEASE SAVEPOINT op");
          results.push({ p, ok: true, value, buffer });
          break;
        } catch (error) {
          if ((await deferredFirst()) === "careful") return "careful";
          if (isUnavailableError(error)) throw error;
          if (mode === "optimistic") {
            await pipe.rollback();
            return "retry";
          }
          if (mode === "single") {
            await pipe.rollback();
            if (isRetryableConflict(error) && tries < CONFLICT_ATTEMPTS) {
              await conflictPause(tries);
              // Not pipelined any more: what it deferred before was rolled back with the transaction.
              if (pipelined) return "careful";
              await pipe.query("BEGIN");
              continue;
            }
            p.reject(classifyError(error));
            return "done";
          }
          // A deadlock or serialization failure here involves the locks the batch's earlier operations still hold:
          // running this one again inside the same transaction meets the same conflict (a deadlock, again, once the
          // detector's second has passed). The whole batch rolls back and runs again after a pause (`commit`).
          if (isRetryableConflict(error)) throw error;
          await pipe.query("ROLLBACK TO SAVEPOINT op");
          await pipe.query("RELEASE SAVEPOINT op");
          results.push({ p, ok: false, value: classifyError(error), buffer });
          break;
        }
      }
    }
    // Flush and COMMIT go out together, in one write with whatever was deferred (or composed with it into one
    // statement): the counters' row locks the flush takes are released without waiting for a round trip through
    // this busy event loop. Other batches, of this node and of others, queue on those rows, so that wait would
    // become everybody's. A failed statement turns the COMMIT into a ROLLBACK on the server.
    const flushed = this.flush(pipe, results);
    const committed = pipe.commit();
    pipe.flush();
    const [begin, flush, commit] = await Promise.allSettled([begun, flushed, committed]);
    if (begin.status === "rejected") throw begin.reason;
    // A deferred statement that failed is the cause of any failure after it (the transaction was aborted there).
    const cause = await pipe.deferredFailure();
    if (cause !== undefined) {
      if (isUnavailableError(cause) || isRetryableConflict(cause)) throw cause;
      return "careful"; // the COMMIT was a ROLLBACK: nothing was written
    }
    // A premise the flush checks (a publish's token, Tx.checkTokenAtFlush) no longer held: nothing was written.
    if (flush.status === "rejected" && pipelined && isExpectFailure(flush.reason)) return "careful";
    if (flush.status === "rejected") throw flush.reason;
    if (commit.status === "rejected") throw commit.reason;
    for (const r of results) {
      if (r.ok) r.p.resolve(r.value);
      else r.p.reject(r.value);
    }
    return "done";
  }

  private async flush(pipe: Pipe, results: { ok: boolean; buffer: OpBuffer }[]): Promise<void> {
    const logs: LogEntry[] = [];
    const usage = new Map<string, UsageRow>();
    // One check per account and token: a run's publishes of one account (nearly always all of them) share it.
    const tokenChecks = new Map<string, TokenCheck>();
    let due = false;
    for (const r of results) {
      if (!r.ok) continue;
      logs.push(...r.buffer.logs);
      for (const c of r.buffer.tokenChecks) tokenChecks.set(`${c.accountId}\u0000${c.token}`, c);
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
    if (logs.length === 0 && usage.size === 0 && !due && tokenChecks.size === 0) return;
    // Same order in every batch: two batches updating the same counters cannot deadlock.
    const rows = [...usage.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    await this.sink(pipe, { logs, usage: rows, notifyDue: due, tokenChecks: [...tokenChecks.values()] });
  }
}
