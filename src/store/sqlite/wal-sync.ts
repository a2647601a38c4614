import { closeSync, existsSync, fsync, openSync } from "node:fs";

/**
 * Durability off the event loop. With `synchronous=FULL`, SQLite fsyncs the WAL inside COMMIT, blocking the only
 * thread for the whole fsync (several ms on a busy disk; measured here as a third of the server's time under load).
 * Instead SQLite runs with `synchronous=NORMAL`, where a commit is a write() into the WAL (safe against a process
 * crash, not against power loss), and Ferry fsyncs the WAL file itself on libuv's thread pool before it resolves
 * any write: an acknowledged commit is on disk exactly as with FULL. Commits that finish while an fsync runs share
 * the next one, so the number of fsyncs adapts to the load.
 *
 * The WAL file is never deleted while this connection is open (SQLite removes it only when the last connection
 * closes), so one descriptor, opened at the first sync, stays valid.
 */
export class WalSync {
  private fd: number | undefined;
  private running = false;
  /** Writes committed while no fsync covers them yet. */
  private waiting: (() => void)[] = [];
  private failing: ((error: unknown) => void)[] = [];
  /** Callers waiting for the running fsync to end (see `whenIdle`). */
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly walPath: string) {}

  /** Calls `done` once everything committed before this call is on disk (or `failed` if the fsync failed). */
  afterDurable(done: () => void, failed: (error: unknown) => void): void {
    this.waiting.push(done);
    this.failing.push(failed);
    if (!this.running) this.start();
  }

  /**
   * Calls `next` at once when no fsync runs, else as soon as the running one ends. The group commit waits here
   * before it commits (write-batcher.ts): writes that arrive while an fsync runs could not be acknowledged before
   * the next fsync anyway, so holding them costs no latency, and one larger transaction writes each hot page to
   * the WAL once instead of once per small commit.
   */
  whenIdle(next: () => void): void {
    if (!this.running) next();
    else this.idleWaiters.push(next);
  }

  private start(): void {
    const done = this.waiting;
    const failed = this.failing;
    this.waiting = [];
    this.failing = [];
    if (this.fd === undefined) {
      if (!existsSync(this.walPath)) {
        // Nothing was ever written to the WAL: nothing to make durable.
        for (const d of done) d();
        return;
      }
      this.fd = openSync(this.walPath, "r");
    }
    this.running = true;
    fsync(this.fd, (error) => {
      this.running = false;
      if (error) for (const f of failed) f(error);
      else for (const d of done) d();
      if (this.waiting.length > 0) this.start();
      const idle = this.idleWaiters;
      this.idleWaiters = [];
      for (const next of idle) next();
    });
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
