import type Database from "better-sqlite3";

interface Pending {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Transactions larger than this are split: a huge batch would hold the event loop for too long. */
const MAX_OPS_PER_COMMIT = 2000;

/**
 * Group commit: write operations that arrive in the same event-loop turn run in one transaction, so one fsync
 * covers all of them (one commit per message caps near 8k/s here, batches reach 50k+). Each operation runs inside
 * its own SAVEPOINT, so one that throws is rolled back and rejected alone while the others commit. Promises resolve
 * only after COMMIT returned: nothing is acknowledged before it is durable.
 */
export class WriteBatcher {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private readonly db: Database.Database) {}

  run<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run: op, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs everything queued now (used by close()). */
  flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_OPS_PER_COMMIT);
      this.commit(batch);
    }
  }

  private commit(batch: Pending[]): void {
    const results: { ok: boolean; value: unknown }[] = [];
    try {
      this.db.exec("BEGIN IMMEDIATE");
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    try {
      for (const p of batch) {
        if (batch.length === 1) {
          results.push({ ok: true, value: p.run() });
          continue;
        }
        this.db.exec("SAVEPOINT op");
        try {
          results.push({ ok: true, value: p.run() });
          this.db.exec("RELEASE op");
        } catch (error) {
          this.db.exec("ROLLBACK TO op");
          this.db.exec("RELEASE op");
          results.push({ ok: false, value: error });
        }
      }
      this.db.exec("COMMIT");
    } catch (error) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      for (const p of batch) p.reject(error);
      return;
    }
    batch.forEach((p, i) => {
      const r = results[i]!;
      if (r.ok) p.resolve(r.value);
      else p.reject(r.value);
    });
  }
}
