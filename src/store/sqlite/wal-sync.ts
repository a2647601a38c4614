import { closeSync, existsSync, fsync, openSync } from "node:fs";

/** node:fs `fsync`'s shape; tests pass one they complete by hand. */
export type FsyncFn = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;

/**
 * How many fsyncs of the WAL may run at once. Two: on this machine's disk (ext4 on a virtual disk), a second fsync
 * started while one runs shares the first's journal commit and cache flush far more often than not, so a commit made
 * while an fsync runs is durable soon after instead of an fsync later (docs/threading.md "The P1 path now",
 * "Overlapped fsyncs"). More brings no more: a third would only wait behind the two.
 */
export const MAX_FSYNCS_IN_FLIGHT = 2;

interface Waiter {
  /** The write's place in commit order. */
  seq: number;
  done: () => void;
  failed: (error: unknown) => void;
}

interface Running {
  /** Every write up to this one was committed before this fsync started, so it covers them. */
  covers: number;
  /** Set once it returned; its waiters are settled only once every fsync started before it returned too. */
  result?: { error: unknown };
}

/**
 * Durability off the event loop. With `synchronous=FULL`, SQLite fsyncs the WAL inside COMMIT, blocking the only
 * thread for the whole fsync (several ms on a busy disk; measured here as a third of the server's time under load).
 * Instead SQLite runs with `synchronous=NORMAL`, where a commit is a write() into the WAL (safe against a process
 * crash, not against power loss), and Ferry fsyncs the WAL file itself on libuv's thread pool before it resolves
 * any write: an acknowledged commit is on disk exactly as with FULL.
 *
 * Up to `maxInFlight` fsyncs run at once; a commit made while as many run waits for the next one, and commits that
 * finish while they run share it, so the number of fsyncs adapts to the load. An fsync covers every write committed
 * before it started (POSIX), and results are applied in the order the fsyncs started: a write is acknowledged only
 * once its fsync and every earlier one succeeded. A failed fsync rejects its writes and those of every fsync that ran
 * beside it, whatever they returned: the kernel reports a writeback error to only one of the fsyncs of a file that
 * check for it, so another one's success proves nothing for pages written before the failure was seen.
 *
 * The WAL file is never deleted while this connection is open (SQLite removes it only when the last connection
 * closes), so one descriptor, opened at the first sync, stays valid.
 */
export class WalSync {
  private fd: number | undefined;
  /** Writes registered so far (the last one's `seq`). */
  private registered = 0;
  /** The last write an fsync that has started covers. */
  private started = 0;
  /** Writes not yet settled, in commit order. */
  private waiters: Waiter[] = [];
  /** Fsyncs started and not yet applied, in start order. */
  private running: Running[] = [];
  /** Writes up to this one are rejected whatever their fsync returns (a failure was seen while it ran). */
  private poisonedUpTo = 0;
  private poison: unknown;
  /** Callers waiting for room to commit (see `whenIdle`). */
  private idleWaiters: (() => void)[] = [];
  private releaseScheduled = false;

  constructor(
    private readonly walPath: string,
    private readonly maxInFlight = MAX_FSYNCS_IN_FLIGHT,
    private readonly fsyncFile: FsyncFn = fsync,
  ) {}

  /** Calls `done` once everything committed before this call is on disk (or `failed` if an fsync failed). */
  afterDurable(done: () => void, failed: (error: unknown) => void): void {
    this.waiters.push({ seq: ++this.registered, done, failed });
    if (this.running.length < this.maxInFlight) this.start();
  }

  /**
   * Calls `next` at once when fewer than `maxInFlight` fsyncs run, else as soon as one of them ends. The group
   * commit waits here before it commits (write-batcher.ts): a commit that could not start its own fsync now would
   * only wait for the next one, so holding it costs no latency, and one larger transaction writes each hot page to
   * the WAL once instead of once per small commit.
   */
  whenIdle(next: () => void): void {
    if (this.running.length < this.maxInFlight) next();
    else this.idleWaiters.push(next);
  }

  private start(): void {
    if (this.fd === undefined) {
      if (!existsSync(this.walPath)) {
        // Nothing was ever written to the WAL: nothing to make durable.
        this.started = this.registered;
        this.settle(this.registered, undefined);
        return;
      }
      this.fd = openSync(this.walPath, "r");
    }
    const run: Running = { covers: this.registered };
    this.started = run.covers;
    this.running.push(run);
    this.fsyncFile(this.fd, (error) => {
      run.result = { error: error ?? undefined };
      if (error) {
        // Everything an fsync running now covers is suspect (see the class comment).
        const last = this.running.at(-1)!;
        if (last.covers > this.poisonedUpTo) {
          this.poisonedUpTo = last.covers;
          this.poison = error;
        }
      }
      this.applyFinished();
    });
  }

  /** Applies the results of the oldest fsyncs that have returned, in start order, then lets waiting work go on. */
  private applyFinished(): void {
    for (let run = this.running[0]; run?.result; run = this.running[0]) {
      this.running.shift();
      this.settle(run.covers, run.result.error);
    }
    if (this.idleWaiters.length === 0) {
      if (this.registered > this.started && this.running.length < this.maxInFlight) this.start();
      return;
    }
    // The writes just settled are answered before the held commits run: their acknowledgements go out in the
    // microtasks after this callback, and a commit run here would come before them. A closed loop of publishers (P1)
    // waits on those answers; measured 1.10× and 1.27× P1's msg/s (docs/threading.md "Answers before the next commit").
    if (this.releaseScheduled) return;
    this.releaseScheduled = true;
    setImmediate(() => {
      this.releaseScheduled = false;
      // Held commits go first: the fsync the first of them starts covers the writes waiting for room too.
      while (this.idleWaiters.length > 0 && this.running.length < this.maxInFlight) this.idleWaiters.shift()!();
      if (this.registered > this.started && this.running.length < this.maxInFlight) this.start();
    });
  }

  private settle(upTo: number, error: unknown): void {
    let n = 0;
    while (n < this.waiters.length && this.waiters[n]!.seq <= upTo) n++;
    for (const w of this.waiters.splice(0, n)) {
      if (error !== undefined) w.failed(error);
      else if (w.seq <= this.poisonedUpTo) w.failed(this.poison);
      else w.done();
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
