import type Database from "better-sqlite3";
import { recordCommit } from "../../metrics/metrics.js";

interface Pending {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Transactions larger than this are split: a huge batch would hold the event loop for too long. */
const MAX_OPS_PER_COMMIT = 2000;

export interface CommitHooks {
  /**
   * Calls `done` once the committed writes are durable (an fsync off the event loop, see wal-sync.ts); absent when
   * SQLite's own synchronous setting is the durability promise.
   */
  afterDurable?(done: () => void, failed: (error: unknown) => void): void;
  /**
   * Calls `next` when a commit now is best: at once, or once the running fsync ends (wal-sync.ts `whenIdle`);
   * absent when nothing is to be waited for.
   */
  whenReadyToCommit?(next: () => void): void;
  /** Runs after every COMMIT (wal-checkpoint.ts counts them). */
  afterCommit?(): void;
  /** Runs inside the transaction, after the operations and before COMMIT (e.g. writes aggregated counters). */
  beforeCommit(): void;
  /** The transaction was rolled back: drop whatever the operations accumulated for beforeCommit. */
  afterRollback(): void;
}

/**
 * Group commit: write operations that arrive in the same event-loop turn run in one transaction, so one fsync
 * covers all of them (one commit per message caps near 8k/s here, batches reach 50k+). Promises resolve only after
 * COMMIT returned: nothing is acknowledged before it is durable.
 *
 * The batch runs optimistically, without a SAVEPOINT per operation (those cost more than the operations
 * themselves). If one operation throws, the whole batch is rolled back and every operation runs again in its own
 * transaction, so the failing one is rejected alone while the others commit. Operations only touch the database
 * and their own result, so running them again after a rollback is safe.
 */
export class WriteBatcher {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly begin: Database.Statement;
  private readonly commitStatement: Database.Statement;
  private readonly rollback: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly hooks: CommitHooks,
  ) {
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.commitStatement = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
  }

  run<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run: op, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        const wait = this.hooks.whenReadyToCommit;
        setImmediate(() => (wait ? wait(() => this.flush()) : this.flush()));
      }
    });
  }

  /** Runs everything queued now (used by close()). */
  flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_OPS_PER_COMMIT);
      const startedAt = performance.now();
      const results = batch.length > 1 ? this.tryBatch(batch) : undefined;
      if (results) {
        this.acknowledge(batch.map((p, i) => () => p.resolve(results[i])), batch);
        this.hooks.afterCommit?.();
      } else for (const p of batch) this.settleAlone(p);
      recordCommit(batch.length, startedAt);
    }
  }

  /** Runs the operations in one transaction; undefined when anything failed (and everything was rolled back). */
  private tryBatch(batch: Pending[]): unknown[] | undefined {
    try {
      this.begin.run();
      const results = batch.map((p) => p.run());
      this.hooks.beforeCommit();
      this.commitStatement.run();
      return results;
    } catch {
      if (this.db.inTransaction) this.rollback.run();
      this.hooks.afterRollback();
      return undefined;
    }
  }

  /** Resolves committed operations, once durable when an fsync is pending; a failed fsync rejects them. */
  private acknowledge(resolutions: (() => void)[], batch: Pending[]): void {
    if (!this.hooks.afterDurable) {
      for (const r of resolutions) r();
      return;
    }
    this.hooks.afterDurable(
      () => {
        for (const r of resolutions) r();
      },
      (error) => {
        for (const p of batch) p.reject(error);
      },
    );
  }

  /** One operation in its own transaction: it resolves or rejects alone. */
  private settleAlone(p: Pending): void {
    let value: unknown;
    try {
      this.begin.run();
      value = p.run();
      this.hooks.beforeCommit();
      this.commitStatement.run();
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      this.hooks.afterRollback();
      p.reject(error);
      return;
    }
    this.acknowledge([() => p.resolve(value)], [p]);
    this.hooks.afterCommit?.();
  }
}
