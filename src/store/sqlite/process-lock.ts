import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { StartupError } from "../../errors.js";

/**
 * One Ferry process per SQLite file (docs/operations.md, "One process per SQLite file"). Two processes on one file
 * would each claim the other's leases at start and deliver every in-flight message twice, so `ferry serve` and
 * `ferry dev` take this lock before they open the store, and a second one refuses to start naming the file and the
 * process that holds it.
 *
 * The lock is the operating system's: `<file>.lock` is a small SQLite database on which the holder keeps a write
 * transaction open (BEGIN IMMEDIATE: SQLite's RESERVED lock, an fcntl lock on the file). The kernel drops it when the
 * holder exits in any way, SIGKILL and a crash included, so a stale lock can never block a restart. A lock file
 * holding a pid, checked for liveness, was weighed and not chosen: a pid can be reused (in a container Ferry is often
 * pid 1 at every start), another host or pid namespace on a shared volume cannot be checked, and creating and
 * removing the file races. The holder's pid, host and start time are written in the lock database before the
 * transaction is held; RESERVED still lets the refused process read them.
 */
export interface ProcessLock {
  readonly path: string;
  release(): void;
}

interface Holder {
  pid: number;
  host: string;
  since: number;
}

export function lockSqliteFile(databasePath: string, now: number): ProcessLock {
  const file = resolve(databasePath);
  const path = `${file}.lock`;
  mkdirSync(dirname(path), { recursive: true });
  // timeout 0: a held lock answers SQLITE_BUSY at once instead of being waited for.
  const db = new Database(path, { timeout: 0 });
  try {
    holdOrRefuse(db, file, () =>
      db.exec("CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, host TEXT NOT NULL, since INTEGER NOT NULL)"),
    );
    const write = db.transaction(() => {
      db.prepare("DELETE FROM holder").run();
      db.prepare("INSERT INTO holder (pid, host, since) VALUES (?, ?, ?)").run(process.pid, hostname(), now);
    });
    holdOrRefuse(db, file, () => write.immediate());
    // Held from here until release() or the process's end. Between the commit above and this BEGIN another process
    // may take the lock; then this one refuses, naming it (never both hold it).
    holdOrRefuse(db, file, () => db.exec("BEGIN IMMEDIATE"));
  } catch (error) {
    db.close();
    throw error;
  }
  return {
    path,
    release: () => {
      if (!db.open) return;
      db.exec("ROLLBACK");
      db.close();
    },
  };
}

function holdOrRefuse(db: Database.Database, file: string, take: () => void): void {
  try {
    take();
  } catch (error) {
    if ((error as { code?: string }).code !== "SQLITE_BUSY") throw error;
    let holder: Holder | undefined;
    try {
      holder = db.prepare("SELECT pid, host, since FROM holder").get() as Holder | undefined;
    } catch {
      holder = undefined; // the holder has not written itself yet
    }
    const who = holder
      ? `pid ${holder.pid} on ${holder.host}, started ${new Date(holder.since).toISOString()}`
      : "a process that is still starting";
    throw new StartupError(
      `the SQLite database ${file} is in use by another Ferry process (${who}; lock ${file}.lock). ` +
        "Two processes on one SQLite file would deliver messages twice: stop the other one first, or use PostgreSQL " +
        "(DATABASE_URL=postgres://…) to run several nodes.",
    );
  }
}
