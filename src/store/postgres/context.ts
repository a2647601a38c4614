import type pg from "pg";
import type { Logger } from "pino";
import type { Message, NewMessage } from "../../domain/message.js";
import { classifyError, createPool } from "./connection.js";
import { noteFlowKeys } from "./flow-keys.js";
import {
  arrayRows,
  columnsOf,
  LOG_COLUMNS,
  logValues,
  MESSAGE_COLUMNS,
  messageInsertSql,
  messageValues,
  unnestInsertSql,
} from "./rows.js";
import { type MergeableOp, PgWriteBatcher, type Statement, type Tx, type WriteOp } from "./write-batcher.js";
import { tokensExpectSql } from "./token-check.js";
import { composable } from "./compose.js";

export type { Tx } from "./write-batcher.js";

/** The channel every node LISTENs on; a NOTIFY on it means "claim now, something is due". */
export const DUE_CHANNEL = "ferry_due";
/** A NOTIFY on it (a trigger on `accounts`, migration 010) means "an account changed: forget cached ones". */
export const ACCOUNTS_CHANNEL = "ferry_accounts";

export interface PgStoreOptions {
  connectionString: string;
  /** Connections this node may hold. (Default: 10) */
  poolSize?: number;
  /**
   * Messages due within this horizon wake the other nodes (NOTIFY); later ones are found by their poll, which also
   * arms their timers. Set it to the poll interval. (Default: 1000 ms)
   */
  notifyHorizonMs?: number;
  /**
   * The least a plain delivery's outcome waits to share the next transaction before it starts one; longer, up to
   * 50 ms, when this node's publish runs come rarely (write-batcher.ts, MergeableOp.lazy). (Default: LAZY_WAIT_MS, 10 ms)
   */
  lazyWaitMs?: number;
  /**
   * The most a busy node's next publish run waits to gather more publishes into its transaction, and never longer
   * than one of its mean run durations (write-batcher.ts, gatherUntil; docs/postgres.md "Gathering publish runs").
   * 0: never. (Default: GATHER_MS, 5 ms)
   */
  gatherMs?: number;
  /** How long start-up waits for an unreachable database before it gives up (migrate.ts). (Default: 30000 ms) */
  startWaitMs?: number;
  /**
   * The write relay (relay/index.ts; docs/postgres.md "The write relay"): this node hands its plain writes to the
   * cluster's leader, or leads. `host`: where it listens when it leads. Absent: off (every node commits its own).
   */
  relay?: { host?: string };
  log?: Logger;
}

/** What every PostgreSQL query module shares: the pool, group commit and the common writes. */
export interface PgContext {
  pool: pg.Pool;
  options: Required<Omit<PgStoreOptions, "log" | "startWaitMs" | "lazyWaitMs" | "gatherMs" | "relay">> & { log?: Logger };
  /** A read: one statement on any pooled connection (autocommit). */
  query<R = Record<string, unknown>>(statement: Statement, values?: unknown[]): Promise<R[]>;
  /** Every write goes through here (group commit; see write-batcher.ts). */
  write<T>(op: WriteOp<T>): Promise<T>;
  /** A write that may share one run with the others of its kind in the batch (write-batcher.ts, MergeableOp). */
  writeMerged<I, R>(op: MergeableOp<I, R>): Promise<R>;
  /** Inserts message rows in one statement; due ones (within the notify horizon) wake the other nodes. */
  insertMessages(
    tx: Tx,
    rows: { message: Message; leaseOwner: string | null; leaseUntil: number | null }[],
    now: number,
  ): Promise<void>;
  /** True when a message due at `dueAt` should wake the other nodes. */
  wakesOthers(dueAt: number, now: number): boolean;
  close(): Promise<void>;
}

const insertMessagesSql = composable("ferry_insert_messages", [["inserted", messageInsertSql()]], []);

const USAGE_COLUMNS = [
  ["account_id", "text"],
  ["minute", "int8"],
  ["metric", "text"],
  ["count", "int8"],
  ["bytes", "int8"],
] as const;
const usageUpsertSql = (first: number) => `INSERT INTO usage (account_id, minute, metric, count, bytes, writer)
      SELECT u.*, pg_backend_pid() FROM ${arrayRows("u", USAGE_COLUMNS, first)}
      ON CONFLICT (account_id, minute, metric, writer)
      DO UPDATE SET count = usage.count + excluded.count, bytes = usage.bytes + excluded.bytes`;
/** The flush's checks: the NOTIFY for other nodes and its publishes' cached tokens, parameters from `first`. */
const flushChecks = (first: number) => [
  `CASE WHEN $${first}::boolean THEN pg_notify('${DUE_CHANNEL}', '') END AS notified`,
  `${tokensExpectSql(`$${first + 1}`, `$${first + 2}`)} AS tokens_hold`,
];
/**
 * Everything a batch buffered, in ONE statement before COMMIT: its log entries (in order), its usage counters
 * (summed, in a fixed order), the NOTIFY for other nodes (pg_notify is delivered at COMMIT, only if it commits), and
 * the check of its publishes' cached tokens (token-check.ts: it fails the transaction when one no longer holds).
 * Round trips and statements are what a batch costs here, so they share one (in a pipelined run, one with the run's
 * other statements: compose.ts). The counters go to this connection's own rows (`writer`, migration 066):
 * transactions of other connections and nodes never wait for their lock.
 */
const flushSql = composable(
  "ferry_flush_batch",
  [
    ["logs_written", unnestInsertSql("logs", LOG_COLUMNS)],
    ["usage_written", usageUpsertSql(LOG_COLUMNS.length + 1)],
  ],
  flushChecks(LOG_COLUMNS.length + 6),
);

/**
 * The same without the log entries, for a batch that has none (plain messages: their rows derive CREATED, ACTIVE and
 * DELIVERED, docs/states.md "The message row"). An INSERT of no rows still opens `logs` and its indexes and locks
 * them, on every publish run.
 */
const flushNoLogsSql = composable("ferry_flush_batch_no_logs", [["usage_written", usageUpsertSql(1)]], flushChecks(6));

export function openPgContext(o: PgStoreOptions): PgContext {
  const options = {
    connectionString: o.connectionString,
    poolSize: o.poolSize ?? 10,
    notifyHorizonMs: o.notifyHorizonMs ?? 1000,
    ...(o.log ? { log: o.log } : {}),
  };
  const pool = createPool(options);
  // An idle pooled connection whose server went away emits 'error' on the pool; the pool drops that client and
  // makes a new one on the next checkout. Unhandled, the event would end the process.
  pool.on("error", (error) => options.log?.warn({ err: error }, "idle database connection lost"));

  const batcher = new PgWriteBatcher(
    pool,
    async (pipe, { logs, usage, notifyDue, tokenChecks }) => {
      // Held: it leaves with the COMMIT the batcher sends right after, or composed with the run (write-batch-tx.ts).
      const rest = [
        usage.map((r) => r.accountId),
        usage.map((r) => r.minute),
        usage.map((r) => r.metric),
        usage.map((r) => r.count),
        usage.map((r) => r.bytes),
        notifyDue,
        tokenChecks.map((c) => c.accountId),
        tokenChecks.map((c) => c.token),
      ];
      if (logs.length === 0) await pipe.sendLater(flushNoLogsSql, rest);
      else await pipe.sendLater(flushSql, [...columnsOf(logs.map(logValues), LOG_COLUMNS.length), ...rest]);
    },
    // Leave connections for reads and lease renewals while writes are busy.
    Math.max(1, Math.min(4, options.poolSize - 2)),
    o.lazyWaitMs,
    o.gatherMs,
  );

  const wakesOthers = (dueAt: number, now: number) => dueAt <= now + options.notifyHorizonMs;

  return {
    pool,
    options,
    query: async (statement, values = []) => {
      const config = typeof statement === "string" ? { text: statement, values } : { ...statement, values };
      try {
        return (await pool.query(config)).rows;
      } catch (error) {
        throw classifyError(error);
      }
    },
    write: (op) => batcher.run(op),
    writeMerged: (op) => batcher.runMerged(op),
    insertMessages: async (tx, rows, now) => {
      if (rows.length === 0) return;
      const values = rows.map((r) => messageValues(r.message, r.leaseOwner, r.leaseUntil));
      // Nothing is read back: in a pipelined run it leaves with the COMMIT (write-batch-tx.ts, Tx.defer).
      await tx.defer(insertMessagesSql, columnsOf(values, MESSAGE_COLUMNS.length));
      await noteFlowKeys(tx, rows.map((r) => r.message), now); // a message's flow-control value configures its key
      if (rows.some((r) => r.leaseOwner === null && isClaimable(r.message) && wakesOthers(r.message.dueAt, now))) {
        tx.notifyDue();
      }
    },
    wakesOthers,
    close: async () => {
      await batcher.drain();
      await pool.end();
    },
  };
}

/** Only CREATED/RETRY rows are claimed (QUEUED and WAITING ones wait for their queue or flow-control key). */
const isClaimable = (m: NewMessage) => m.state === "CREATED" || m.state === "RETRY";
