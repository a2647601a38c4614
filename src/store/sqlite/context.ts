import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { LogEntry } from "../../domain/log.js";
import type { Message } from "../../domain/message.js";
import type { UsageMetric } from "../store.js";
import { urlPart } from "../rows-shared.js";
import { flowEngine } from "./flow-control.js";
import { migrate } from "./migrate.js";
import { loadVectorFunctions } from "./vector-functions.js";
import { logParams, MESSAGE_COLUMNS, messageValues } from "./rows.js";
import { WalCheckpointer } from "./wal-checkpoint.js";
import { WalSync } from "./wal-sync.js";
import { WriteBatcher } from "./write-batcher.js";

/** What every SQLite query module shares: the connection, the group-commit batcher and the common writes. */
export interface SqliteContext {
  db: Database.Database;
  /** Every write goes through here; reads use `db` directly. */
  write<T>(op: () => T): Promise<T>;
  insertLog(entry: LogEntry): void;
  /**
   * Inserts a message row; one that derives its log (`derivedLog`) gets its CREATED entry's position as `seq`, and,
   * inserted leased (`firstLeasedAt`), its first ACTIVE entry's.
   */
  insertMessage(m: Message, leaseOwner: string | null, leaseUntil: number | null): void;
  /** The next position in the log (src/store/derived-log.ts); only inside `write`. */
  nextLogSeq(): number;
  addUsage(accountId: string, now: number, metric: UsageMetric, count: number, bytes: number): void;
  /** Writes what is queued, waits until it is durable, then closes the connection. */
  close(): Promise<void>;
}

const LOG_COLUMNS = [
  "seq",
  "account_id",
  "message_id",
  "state",
  "time",
  "url",
  "topic_name",
  "endpoint_name",
  "queue_name",
  "schedule_id",
  "caller_ip",
  "labels",
  "flow_key",
  "details",
];

const insertSql = (table: string, columns: readonly string[]) =>
  `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})`;
/** Positional (`?`): see rows.ts `messageValues`. */
const insertSqlPositional = (verb: string, table: string, columns: readonly string[]) =>
  `${verb} INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;

/**
 * A message row's INSERT. OR FAIL: with migration 068's triggers nothing in it can then abort, so SQLite keeps no
 * statement journal for it (a copy of every page it writes); any failure still rolls the whole transaction back
 * (write-batcher.ts).
 */
export const MESSAGE_INSERT_SQL = insertSqlPositional("INSERT OR FAIL", "messages", MESSAGE_COLUMNS);

export function openSqlite(path: string, synchronous: "FULL" | "NORMAL"): SqliteContext {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  // FULL durability is kept by an fsync of the WAL off the event loop before any write resolves (wal-sync.ts);
  // SQLite itself then only needs NORMAL. An in-memory database has nothing to sync.
  const walSync = synchronous === "FULL" && path !== ":memory:" ? new WalSync(`${path}-wal`) : undefined;
  db.pragma(`synchronous = ${walSync ? "NORMAL" : synchronous}`);
  // Another process (the `ferry` CLI) may write while the server runs; wait for its lock instead of failing.
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  db.function("url_host", { deterministic: true }, (url: unknown) => urlPart(String(url), "host"));
  db.function("url_path", { deterministic: true }, (url: unknown) => urlPart(String(url), "path"));
  loadVectorFunctions(db);
  migrate(db);
  // With the WAL fsynced by Ferry, its checkpoints leave the event loop too (wal-checkpoint.ts).
  const checkpointer = walSync
    ? new WalCheckpointer(db, path, {
        afterDurable: (done, failed) => walSync.afterDurable(done, failed),
        onError: (error) => process.emitWarning(`WAL checkpoint failed: ${String(error)}`, "FerryStoreWarning"),
      })
    : undefined;

  // Usage counters of one transaction are summed in memory and written once, just before its COMMIT.
  const pendingUsage = new Map<
    string,
    { accountId: string; minute: number; metric: UsageMetric; count: number; bytes: number }
  >();
  // The log's positions (src/store/derived-log.ts): read once per transaction, written back before its COMMIT. The
  // write lock makes this safe with another process (the CLI) writing the same file. A row inserted without a `seq`
  // (by hand, or by a tool that does not know the counter) advances AUTOINCREMENT instead: the read takes that too,
  // so a position is never handed out twice.
  const readLogSeq = db
    .prepare(
      `SELECT MAX((SELECT value FROM id_counters WHERE name = 'log_seq'),
         COALESCE((SELECT MAX(seq) FROM sqlite_sequence WHERE name IN ('logs', 'messages')), 0))`,
    )
    .pluck();
  const writeLogSeq = db.prepare("UPDATE id_counters SET value = ? WHERE name = 'log_seq'");
  let logSeq: number | undefined;
  let logSeqRead = 0;
  const nextLogSeq = (): number => {
    if (logSeq === undefined) logSeq = logSeqRead = readLogSeq.get() as number;
    return ++logSeq;
  };
  const batcher = new WriteBatcher(db, {
    beforeCommit: () => {
      for (const u of pendingUsage.values()) addUsage.run(u.accountId, u.minute, u.metric, u.count, u.bytes);
      pendingUsage.clear();
      if (logSeq !== undefined && logSeq !== logSeqRead) writeLogSeq.run(logSeq);
      logSeq = undefined;
    },
    afterRollback: () => {
      pendingUsage.clear();
      logSeq = undefined;
    },
    ...(walSync
      ? {
          afterDurable: (done: () => void, failed: (e: unknown) => void) => walSync.afterDurable(done, failed),
          // The checkpointer's hold comes last, so that no commit it holds back is already past it.
          whenReadyToCommit: (next: () => void) => walSync.whenIdle(() => checkpointer!.whenCommitsAllowed(next)),
          afterCommit: () => checkpointer!.afterCommit(),
        }
      : {}),
  });
  const flow = flowEngine(db);
  const insertMessage = db.prepare(MESSAGE_INSERT_SQL);
  const insertLog = db.prepare(insertSql("logs", LOG_COLUMNS));
  const addUsage = db.prepare(
    `INSERT INTO usage (account_id, minute, metric, count, bytes) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (account_id, minute, metric) DO UPDATE SET count = count + excluded.count, bytes = bytes + excluded.bytes`,
  );
  return {
    db,
    write: (op) => batcher.run(op),
    nextLogSeq,
    insertLog: (e) => insertLog.run(logParams(e, nextLogSeq())),
    insertMessage: (m, owner, until) => {
      const seq = nextLogSeq();
      const activeSeq = m.derivedLog && m.firstLeasedAt !== undefined ? nextLogSeq() : null;
      insertMessage.run(messageValues(m, owner, until, seq, activeSeq));
      flow.noteInsert(m); // a message's flow-control value configures its key (unless pinned)
    },
    addUsage: (accountId, now, metric, count, bytes) => {
      const minute = now - (now % 60_000);
      const key = `${accountId}\0${minute}\0${metric}`;
      const u = pendingUsage.get(key);
      if (u) {
        u.count += count;
        u.bytes += bytes;
      } else {
        pendingUsage.set(key, { accountId, minute, metric, count, bytes });
      }
    },
    close: async () => {
      // A cycle's copy must be fsynced before a commit may restart the WAL: let it end first.
      await checkpointer?.close();
      batcher.flush();
      if (walSync) {
        await new Promise<void>((resolve) => walSync.afterDurable(resolve, () => resolve()));
        walSync.close();
      }
      db.close();
    },
  };
}
