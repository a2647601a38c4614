import { closeSync, fsync, openSync } from "node:fs";
import Database from "better-sqlite3";
import type { FsyncFn } from "./wal-sync.js";

/**
 * WAL frames after which a checkpoint cycle starts. SQLite's own default is 1,000 (`wal_autocheckpoint`); a larger
 * WAL means fewer cycles, and each copies a hot page once however often it was written meanwhile
 * (docs/threading.md "Checkpoints off the event loop").
 */
export const CHECKPOINT_FRAMES = 4000;

/** What a cycle needs from the write path: its fsyncs of the WAL, and a way to hold the next commit. */
export interface CheckpointHooks {
  /** Calls `done` once every commit made before this call is on disk (wal-sync.ts `afterDurable`). */
  afterDurable(done: () => void, failed: (error: unknown) => void): void;
  /**
   * A cycle failed; the next one tries again, except after a failed fsync of the database file, when the WAL only
   * grows until the next start (`stuck`).
   */
  onError(error: unknown): void;
}

/**
 * Checkpoints of the WAL with SQLite's syncs off, their fsyncs on libuv's pool: the main connection no longer
 * checkpoints inside a COMMIT (`wal_autocheckpoint = 0`), where SQLite would fsync the WAL and then the database file
 * on the event loop, every ~1,000 frames (about 5 ms each; docs/threading.md "Checkpoints off the event loop").
 *
 * A cycle runs twice through the same steps, once for the bulk while commits go on and once for the rest while the
 * next commit is held:
 * 1. a second connection opens a read transaction: its read mark pins the WAL, so no writer (in this process or
 *    another) can restart the WAL and overwrite frames, and the copy below stops at that mark;
 * 2. every frame up to the mark is made durable (the WAL's own fsync, wal-sync.ts), so the copy never puts in the
 *    database file a page whose frame could still be lost;
 * 3. `wal_checkpoint(PASSIVE)` with `synchronous = OFF` copies those frames into the database file: writes only;
 * 4. the database file is fsynced on the pool, then the read transaction ends.
 * Only once step 4 returned may a frame be overwritten: SQLite restarts the WAL at the first write transaction that
 * finds it wholly copied, and the second pass, which holds commits so that it copies everything, makes that happen.
 * The hold lasts one WAL fsync and one small database fsync; the main thread goes on serving meanwhile.
 */
export class WalCheckpointer {
  private commits = 0;
  /** Commits after which the next cycle starts: adapted to the frames a commit wrote in the last cycle. */
  private commitsPerCycle = 50;
  private running = false;
  private closing = false;
  private holding = false;
  private held: (() => void)[] = [];
  private idleWaiters: (() => void)[] = [];
  private dbFd: number | undefined;
  private readonly pin: Database.Database;
  private readonly beginPin: Database.Statement;
  private readonly readPin: Database.Statement;
  private readonly endPin: Database.Statement;
  /** Set by a failed fsync of the database file, which leaves the pin in place for good (see `pass`). */
  stuck: unknown;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly hooks: CheckpointHooks,
    private readonly frames = CHECKPOINT_FRAMES,
    private readonly fsyncFile: FsyncFn = fsync,
  ) {
    db.pragma("wal_autocheckpoint = 0");
    this.pin = new Database(path);
    this.pin.pragma("wal_autocheckpoint = 0");
    // Starting a read transaction waits only while another connection recovers the WAL index (rare, short).
    this.pin.pragma("busy_timeout = 1000");
    this.beginPin = this.pin.prepare("BEGIN");
    this.readPin = this.pin.prepare("SELECT 1 FROM sqlite_schema LIMIT 1");
    this.endPin = this.pin.prepare("COMMIT");
  }

  /** Called after every COMMIT of the main connection. */
  afterCommit(): void {
    if (++this.commits >= this.commitsPerCycle && !this.running && !this.closing && this.stuck === undefined) {
      this.cycle();
    }
  }

  /** Calls `next` now, or once the second pass of a cycle lets commits go on. */
  whenCommitsAllowed(next: () => void): void {
    if (this.holding) this.held.push(next);
    else next();
  }

  /** Resolves once no cycle runs; none starts after. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.running) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    if (this.stuck === undefined) this.pin.close();
    if (this.dbFd !== undefined) closeSync(this.dbFd);
    this.dbFd = undefined;
  }

  private cycle(): void {
    const commits = this.commits;
    this.commits = 0;
    this.running = true;
    this.pass(false, () => {
      // Commits made during the first pass are not copied yet: the second copies them while the next commit waits.
      this.holding = true;
      this.pass(true, (frames) => {
        this.release();
        // The WAL restarted at the first commit after the last cycle, so its frames are what the commits since wrote.
        const framesPerCommit = Math.max(1, frames) / Math.max(1, commits + this.commits);
        this.commitsPerCycle = Math.min(10_000, Math.max(1, Math.round(this.frames / framesPerCommit)));
        this.end();
      });
    });
  }

  /** Steps 1–4 of the class comment; `then` gets the WAL's frame count at the copy. */
  private pass(hold: boolean, then: (frames: number) => void): void {
    try {
      this.beginPin.run();
      this.readPin.get();
    } catch (error) {
      this.fail(error, hold);
      return;
    }
    this.hooks.afterDurable(
      () => {
        let frames: number;
        try {
          this.db.pragma("synchronous = OFF");
          try {
            frames = (this.db.pragma("wal_checkpoint(PASSIVE)") as { log: number }[])[0]!.log;
          } finally {
            this.db.pragma("synchronous = NORMAL");
          }
          this.dbFd ??= openSync(this.path, "r");
        } catch (error) {
          this.unpin();
          this.fail(error, hold);
          return;
        }
        this.fsyncFile(this.dbFd, (error) => {
          if (error) {
            // Pages the copy wrote may be lost, so the frames they came from must stay: the pin stays and the WAL
            // is never restarted by this process (the next start copies it again, recovery having read it whole).
            this.stuck = error;
            this.release();
            this.hooks.onError(error);
            this.end();
            return;
          }
          this.unpin();
          then(frames);
        });
      },
      (error) => {
        // The WAL's fsync failed: its writes failed with it (wal-sync.ts); nothing was copied. A later cycle retries.
        this.unpin();
        this.fail(error, hold);
      },
    );
  }

  private unpin(): void {
    if (this.pin.inTransaction) this.endPin.run();
  }

  private fail(error: unknown, hold: boolean): void {
    if (hold) this.release();
    this.hooks.onError(error);
    this.end();
  }

  private release(): void {
    this.holding = false;
    for (const next of this.held.splice(0)) next();
  }

  private end(): void {
    this.running = false;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
