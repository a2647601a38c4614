import { mkdtempSync, openSync, readSync, closeSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { WalCheckpointer } from "../../src/store/sqlite/wal-checkpoint.js";
import { type FsyncFn, WalSync } from "../../src/store/sqlite/wal-sync.js";
import { WriteBatcher } from "../../src/store/sqlite/write-batcher.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The write path of src/store/sqlite/context.ts on a real file: group commit, WAL fsyncs, the checkpointer. */
function openWritePath(opts: { frames: number; dbFsync?: FsyncFn }) {
  const dir = mkdtempSync(join(tmpdir(), "ferry-ckpt-"));
  dirs.push(dir);
  const path = join(dir, "t.db");
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE t (v INTEGER PRIMARY KEY, body BLOB)");
  const walSync = new WalSync(`${path}-wal`);
  const errors: unknown[] = [];
  const checkpointer = new WalCheckpointer(
    db,
    path,
    { afterDurable: (done, failed) => walSync.afterDurable(done, failed), onError: (e) => errors.push(e) },
    opts.frames,
    opts.dbFsync,
  );
  const batcher = new WriteBatcher(db, {
    beforeCommit: () => {},
    afterRollback: () => {},
    afterDurable: (done, failed) => walSync.afterDurable(done, failed),
    whenReadyToCommit: (next) => walSync.whenIdle(() => checkpointer.whenCommitsAllowed(next)),
    afterCommit: () => checkpointer.afterCommit(),
  });
  const insert = db.prepare("INSERT INTO t (v, body) VALUES (?, ?)");
  let next = 0;
  const body = Buffer.alloc(2000, 7); // about half a page: every commit writes a few frames
  const write = (rows = 5) =>
    batcher.run(() => {
      for (let i = 0; i < rows; i++) insert.run(++next, body);
    });
  const count = () => (db.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n;
  const close = async () => {
    await checkpointer.close();
    batcher.flush();
    await new Promise<void>((resolve) => walSync.afterDurable(resolve, () => resolve()));
    walSync.close();
    db.close();
  };
  return { path, db, checkpointer, write, count, close, errors, written: () => next };
}

/** The WAL header's salts: SQLite changes them whenever it restarts the WAL from its first frame. */
function walSalt(path: string): string {
  const fd = openSync(`${path}-wal`, "r");
  try {
    const header = Buffer.alloc(8);
    readSync(fd, header, 0, 8, 16);
    return header.toString("hex");
  } finally {
    closeSync(fd);
  }
}

const tick = () => new Promise((r) => setImmediate(r));
const until = async (condition: () => boolean) => {
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(condition()).toBe(true);
};

/**
 * A write path whose fsyncs of the database file complete by hand, written to until a cycle's first copy waits for
 * one (the first cycle starts after 50 commits, before the rate is known).
 */
async function atFirstCopy() {
  const dbFsyncs: ((error: NodeJS.ErrnoException | null) => void)[] = [];
  const w = openWritePath({ frames: 20, dbFsync: (_fd, callback) => dbFsyncs.push(callback) });
  for (let i = 0; i < 60 && dbFsyncs.length === 0; i++) await w.write();
  await until(() => dbFsyncs.length === 1);
  return { w, dbFsyncs };
}

describe("WAL checkpoints off the event loop", () => {
  it("never checkpoints inside a COMMIT of the main connection", () => {
    const w = openWritePath({ frames: 100 });
    expect(w.db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    return w.close();
  });

  it("keeps every frame until the copy is fsynced, holds commits only for the second pass, then restarts the WAL", async () => {
    const { w, dbFsyncs } = await atFirstCopy();
    const salt = walSalt(w.path);

    // First pass: its copy awaits the database fsync, and commits go on meanwhile without restarting the WAL.
    const before = w.count();
    for (let i = 0; i < 5; i++) await w.write();
    expect(w.count()).toBe(before + 25);
    expect(walSalt(w.path)).toBe(salt);

    // Second pass: commits are held from now until its copy is fsynced.
    dbFsyncs.shift()!(null);
    await until(() => dbFsyncs.length === 1);
    const held = w.write();
    let heldDone = false;
    void held.then(() => (heldDone = true));
    for (let i = 0; i < 20; i++) await tick();
    expect(heldDone).toBe(false);
    expect(w.count()).toBe(before + 25);
    expect(walSalt(w.path)).toBe(salt);

    // The copy is durable: the held commit goes, and it restarts the WAL from its first frame.
    dbFsyncs.shift()!(null);
    await held;
    expect(w.count()).toBe(before + 30);
    expect(walSalt(w.path)).not.toBe(salt);
    expect(w.errors).toEqual([]);
    await w.close();
  });

  it("keeps the WAL bounded under sustained writes", async () => {
    const w = openWritePath({ frames: 200 });
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < 4000; i++) {
      inFlight.push(w.write(1));
      if (inFlight.length >= 16) await inFlight.shift();
    }
    await Promise.all(inFlight);
    // 4,000 rows of ~2 KB are over 8 MB of pages; cycles every ~200 frames (800 KB) restart the WAL, which stays
    // near 2 MB here however long the writes go on (12,000 rows: the same).
    expect(statSync(`${w.path}-wal`).size).toBeLessThan(3 * 1024 * 1024);
    expect(w.errors).toEqual([]);
    await w.close();
    const reopened = new Database(w.path);
    expect((reopened.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n).toBe(4000);
    reopened.close();
  });

  it("after a failed fsync of the database file, never lets the WAL restart, and the frames recover the data", async () => {
    const { w, dbFsyncs } = await atFirstCopy();
    const salt = walSalt(w.path);
    dbFsyncs.shift()!(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" }));
    await until(() => w.errors.length === 1);
    expect(w.checkpointer.stuck).toBeDefined();
    // Writes go on; the WAL only grows (no cycle starts, and the pin stays).
    for (let i = 0; i < 200; i++) await w.write();
    expect(dbFsyncs).toHaveLength(0);
    expect(walSalt(w.path)).toBe(salt);
    const total = w.written();
    await w.close(); // the pin stays open, so closing does not checkpoint and delete the WAL
    expect(statSync(`${w.path}-wal`).size).toBeGreaterThan(0);
    const reopened = new Database(w.path);
    expect((reopened.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n).toBe(total);
    reopened.close();
  });

  it("closes only once a running cycle has ended", async () => {
    const { w, dbFsyncs } = await atFirstCopy();
    let closed = false;
    const closing = w.checkpointer.close().then(() => (closed = true));
    for (let i = 0; i < 10; i++) await tick();
    expect(closed).toBe(false);
    dbFsyncs.shift()!(null);
    await until(() => dbFsyncs.length === 1);
    expect(closed).toBe(false);
    dbFsyncs.shift()!(null);
    await closing;
    await w.close();
  });
});
