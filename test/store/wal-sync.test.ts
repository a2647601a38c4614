import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { WalSync } from "../../src/store/sqlite/wal-sync.js";
import { WriteBatcher } from "../../src/store/sqlite/write-batcher.js";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "ferry-walsync-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("durability off the event loop", () => {
  it("resolves committed writes only once the durability hook says so", async () => {
    const db = new Database(join(tempDir(), "t.db"));
    db.exec("CREATE TABLE t (v INTEGER)");
    const pending: (() => void)[] = [];
    const batcher = new WriteBatcher(db, {
      beforeCommit: () => {},
      afterRollback: () => {},
      afterDurable: (done) => pending.push(done),
    });
    const insert = db.prepare("INSERT INTO t VALUES (?)");
    let resolved = 0;
    const writes = [1, 2, 3].map((v) => batcher.run(() => insert.run(v)).then(() => resolved++));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    // Committed (visible to reads) but not acknowledged before the fsync completed.
    expect((db.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n).toBe(3);
    expect(resolved).toBe(0);
    expect(pending).toHaveLength(1); // one fsync covers the whole batch
    pending[0]!();
    await Promise.all(writes);
    expect(resolved).toBe(3);
    db.close();
  });

  it("holds writes that arrive while an fsync runs, and commits them together once it ends", async () => {
    const db = new Database(join(tempDir(), "t.db"));
    db.exec("CREATE TABLE t (v INTEGER)");
    const fsyncs: (() => void)[] = [];
    let syncing = false;
    const idle: (() => void)[] = [];
    let commits = 0;
    const batcher = new WriteBatcher(db, {
      beforeCommit: () => commits++,
      afterRollback: () => {},
      afterDurable: (done) => {
        syncing = true;
        fsyncs.push(() => {
          syncing = false;
          done();
          for (const next of idle.splice(0)) next();
        });
      },
      whenReadyToCommit: (next) => (syncing ? idle.push(next) : next()),
    });
    const insert = db.prepare("INSERT INTO t VALUES (?)");
    const tick = () => new Promise((r) => setImmediate(r));
    const count = () => (db.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n;

    const first = batcher.run(() => insert.run(1));
    await tick();
    expect(commits).toBe(1); // nothing to wait for: committed at once, its fsync now runs
    // Three more turns of writes while that fsync runs: none is committed yet.
    const later: Promise<unknown>[] = [];
    for (const v of [2, 3, 4]) {
      later.push(batcher.run(() => insert.run(v)));
      await tick();
    }
    expect(count()).toBe(1);
    expect(commits).toBe(1);
    // The fsync ends: the first write is acknowledged, and the three held ones commit in one transaction.
    fsyncs.shift()!();
    await first;
    expect(commits).toBe(2);
    expect(count()).toBe(4);
    fsyncs.shift()!();
    await Promise.all(later);
    db.close();
  });

  it("rejects the writes whose fsync failed", async () => {
    const db = new Database(join(tempDir(), "t.db"));
    db.exec("CREATE TABLE t (v INTEGER)");
    const batcher = new WriteBatcher(db, {
      beforeCommit: () => {},
      afterRollback: () => {},
      afterDurable: (_done, failed) => failed(new Error("EIO")),
    });
    await expect(batcher.run(() => db.prepare("INSERT INTO t VALUES (1)").run())).rejects.toThrow("EIO");
    db.close();
  });

  it("fsyncs a real WAL file, and coalesces the waiters of one fsync", async () => {
    const wal = join(tempDir(), "x.db-wal");
    writeFileSync(wal, "frames");
    const sync = new WalSync(wal);
    const order: string[] = [];
    await Promise.all(
      ["a", "b", "c"].map(
        (name) => new Promise<void>((resolve, reject) => sync.afterDurable(() => resolve(void order.push(name)), reject)),
      ),
    );
    expect(order).toEqual(["a", "b", "c"]);
    sync.close();
  });

  it("calls whenIdle's callers at once when no fsync runs, else once the running one ended (one at a time)", async () => {
    const wal = join(tempDir(), "y.db-wal");
    writeFileSync(wal, "frames");
    const sync = new WalSync(wal, 1);
    const order: string[] = [];
    sync.whenIdle(() => order.push("idle before"));
    const durable = new Promise<void>((resolve, reject) => sync.afterDurable(() => resolve(void order.push("durable")), reject));
    const idle = new Promise<void>((resolve) => sync.whenIdle(() => resolve(void order.push("idle after"))));
    await Promise.all([durable, idle]);
    expect(order).toEqual(["idle before", "durable", "idle after"]);
    sync.close();
  });

  describe("two fsyncs at once (docs/threading.md \"Overlapped fsyncs\")", () => {
    /** A WalSync whose fsyncs the test completes by hand, in any order. */
    const manual = () => {
      const wal = join(tempDir(), "m.db-wal");
      writeFileSync(wal, "frames");
      const calls: ((error: NodeJS.ErrnoException | null) => void)[] = [];
      const sync = new WalSync(wal, 2, (_fd, callback) => calls.push(callback));
      const settled: string[] = [];
      const write = (name: string) => sync.afterDurable(() => settled.push(`${name} ok`), () => settled.push(`${name} failed`));
      return { sync, calls, settled, write };
    };

    it("a commit made while one fsync runs starts a second at once; a third waits for room", async () => {
      const { sync, calls, settled, write } = manual();
      const idle: string[] = [];
      write("a");
      expect(calls).toHaveLength(1);
      sync.whenIdle(() => idle.push("second"));
      expect(idle).toEqual(["second"]); // one runs: room for another
      write("b");
      expect(calls).toHaveLength(2);
      sync.whenIdle(() => idle.push("third"));
      write("c"); // committed while two run: covered by the next fsync, none started yet
      expect(calls).toHaveLength(2);
      expect(idle).toEqual(["second"]);
      calls[0]!(null);
      // a is answered first: the held commit and c's fsync wait for the next turn, so that a's acknowledgement goes
      // out before another commit runs; then one fsync covers c and the held commit's writes.
      expect(settled).toEqual(["a ok"]);
      expect(idle).toEqual(["second"]);
      expect(calls).toHaveLength(2);
      await new Promise((r) => setImmediate(r));
      expect(idle).toEqual(["second", "third"]);
      expect(calls).toHaveLength(3);
      sync.close();
    });

    it("applies results in the order the fsyncs started: a later one that returns first waits for the earlier", () => {
      const { sync, calls, settled, write } = manual();
      write("a");
      write("b");
      calls[1]!(null);
      expect(settled).toEqual([]);
      calls[0]!(null);
      expect(settled).toEqual(["a ok", "b ok"]);
      sync.close();
    });

    it("a failed fsync rejects the writes of every fsync that ran beside it, even one that succeeded", () => {
      const { sync, calls, settled, write } = manual();
      write("a");
      write("b");
      calls[0]!(Object.assign(new Error("EIO"), { code: "EIO" }));
      calls[1]!(null);
      expect(settled).toEqual(["a failed", "b failed"]);
      // An fsync started after the failure was seen answers for its own writes.
      write("c");
      calls[2]!(null);
      expect(settled).toEqual(["a failed", "b failed", "c ok"]);
      sync.close();
    });
  });

  it("has nothing to sync before the WAL exists", async () => {
    const sync = new WalSync(join(tempDir(), "none.db-wal"));
    await new Promise<void>((resolve, reject) => sync.afterDurable(resolve, reject));
  });
});
