import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { cpuSecondsOf } from "./proc.js";

/**
 * How much database work a run cost, read from the server itself: committed transactions of the measured database
 * (`pg_stat_database.xact_commit`) and the statements its clients sent (`pg_stat_statements`, loaded by
 * startPostgres; BEGIN and COMMIT count, statements inside triggers do not). These do not depend on how loaded the
 * machine is, so they compare runs where msg/s cannot (docs/postgres.md, "Speed").
 */
export interface PgWork {
  commits: number;
  rollbacks: number;
  statements: number;
  /** Calls per statement text (normalised by pg_stat_statements), for "where the round trips go". */
  byStatement: Map<string, number>;
  /** Execution time per statement text in ms (pg_stat_statements.total_exec_time: planning, protocol and COMMIT's
   * WAL flush are not in it). */
  execMs: Map<string, number>;
  /** plpgsql functions and triggers of the measured database (track_functions = pl): calls, own time in ms. */
  functions: Map<string, { calls: number; selfMs: number }>;
  /** WAL written by the whole cluster (pg_current_wal_lsn), bytes. */
  walBytes: number;
  /** Checkpoints the cluster started (pg_stat_bgwriter: timed and requested, e.g. by max_wal_size). */
  checkpoints: number;
}

/**
 * A backend reports its transaction counts to the shared statistics when it goes idle, at most once a second, and
 * an idle one that reported less than a second ago only retries after 10 s (PostgreSQL 15, pgstat_report_stat):
 * this long after the last activity, every count has arrived.
 */
const STATS_SETTLE_MS = 11_000;

/** Reads the work counters of database `database` through a separate database (`bench_stats`), so reading them
 * adds nothing to what is measured. */
export class PgWorkMeter {
  private constructor(
    private readonly client: pg.Client,
    private readonly database: string,
    /** On the measured database itself: pg_stat_user_functions only shows the current database's functions. */
    private readonly measured: pg.Client,
  ) {}

  static async open(url: string): Promise<PgWorkMeter> {
    const u = new URL(url);
    const database = u.pathname.slice(1) || "postgres";
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = 'bench_stats'");
      if (exists.rowCount === 0) await admin.query("CREATE DATABASE bench_stats");
    } finally {
      await admin.end();
    }
    u.pathname = "/bench_stats";
    const client = new pg.Client({ connectionString: u.toString() });
    await client.connect();
    await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    const measured = new pg.Client({ connectionString: url });
    await measured.connect();
    return new PgWorkMeter(client, database, measured);
  }

  /** The counters now, after waiting until every backend has reported (see STATS_SETTLE_MS). */
  async read(): Promise<PgWork> {
    await sleep(STATS_SETTLE_MS);
    const [db] = (
      await this.client.query<{ commits: string; rollbacks: string }>(
        "SELECT xact_commit AS commits, xact_rollback AS rollbacks FROM pg_stat_database WHERE datname = $1",
        [this.database],
      )
    ).rows;
    const rows = (
      await this.client.query<{ query: string; calls: string; exec_ms: number }>(
        `SELECT query, sum(calls) AS calls, sum(total_exec_time) AS exec_ms FROM pg_stat_statements
          WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) GROUP BY query`,
        [this.database],
      )
    ).rows;
    const [cluster] = (
      await this.client.query<{ wal: string; checkpoints: string }>(
        `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS wal,
           checkpoints_timed + checkpoints_req AS checkpoints FROM pg_stat_bgwriter`,
      )
    ).rows;
    const byStatement = new Map(rows.map((r) => [r.query, Number(r.calls)]));
    const execMs = new Map(rows.map((r) => [r.query, Number(r.exec_ms)]));
    const fns = (
      await this.measured.query<{ name: string; calls: string; self_ms: number }>(
        "SELECT funcname AS name, calls, self_time AS self_ms FROM pg_stat_user_functions",
      )
    ).rows;
    return {
      functions: new Map(fns.map((f) => [f.name, { calls: Number(f.calls), selfMs: Number(f.self_ms) }])),
      commits: Number(db?.commits ?? 0),
      rollbacks: Number(db?.rollbacks ?? 0),
      statements: rows.reduce((sum, r) => sum + Number(r.calls), 0),
      byStatement,
      execMs,
      walBytes: Number(cluster?.wal ?? 0),
      checkpoints: Number(cluster?.checkpoints ?? 0),
    };
  }

  async close(): Promise<void> {
    await this.client.end();
    await this.measured.end();
  }
}

/** The work between two readings. */
export function workBetween(before: PgWork, after: PgWork): PgWork {
  const byStatement = new Map<string, number>();
  const execMs = new Map<string, number>();
  for (const [q, calls] of after.byStatement) {
    const d = calls - (before.byStatement.get(q) ?? 0);
    if (d > 0) byStatement.set(q, d);
    if (d > 0) execMs.set(q, (after.execMs.get(q) ?? 0) - (before.execMs.get(q) ?? 0));
  }
  const functions = new Map<string, { calls: number; selfMs: number }>();
  for (const [name, f] of after.functions) {
    const b = before.functions.get(name) ?? { calls: 0, selfMs: 0 };
    if (f.calls > b.calls) functions.set(name, { calls: f.calls - b.calls, selfMs: f.selfMs - b.selfMs });
  }
  return {
    functions,
    commits: after.commits - before.commits,
    rollbacks: after.rollbacks - before.rollbacks,
    statements: after.statements - before.statements,
    byStatement,
    execMs,
    walBytes: after.walBytes - before.walBytes,
    checkpoints: after.checkpoints - before.checkpoints,
  };
}

/** "0.31 transactions and 1.9 statements per message". */
export function workPerMessage(w: PgWork, messages: number): string {
  const per = (n: number) => (n / Math.max(1, messages)).toFixed(2);
  const rolled = w.rollbacks > 0 ? ` (${w.rollbacks} rolled back)` : "";
  const wal = (w.walBytes / Math.max(1, messages) / 1024).toFixed(1);
  return `${per(w.commits)} transactions${rolled} and ${per(w.statements)} statements per message; WAL ${wal} KiB per message, ${w.checkpoints} checkpoints`;
}

/**
 * A PostgreSQL process's part in the cluster, from the title it sets (`postgres: checkpointer`, `postgres: walwriter`,
 * `postgres: autovacuum worker`, …); every client connection is a backend.
 */
function roleOf(pid: number, postmaster: number): string {
  if (pid === postmaster) return "postmaster";
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
    const role = /^postgres: (checkpointer|background writer|walwriter|autovacuum \w+|logical replication \w+)/.exec(title);
    return role?.[1] ?? "backends";
  } catch {
    return "backends";
  }
}

/**
 * PostgreSQL's CPU split by process role, so a results file can say whether a round's cost was its backends' work or
 * the checkpointer's and autovacuum's, which fall into whichever round runs when they do.
 */
export class PgRoleCpuMeter {
  private readonly start = new Map<number, number>();

  constructor(
    private readonly postmaster: number,
    private readonly pids: () => number[],
  ) {
    for (const pid of pids()) this.start.set(pid, cpuSecondsOf(pid));
  }

  /** CPU seconds per role since construction. */
  read(): Map<string, number> {
    const byRole = new Map<string, number>();
    for (const pid of this.pids()) {
      const role = roleOf(pid, this.postmaster);
      byRole.set(role, (byRole.get(role) ?? 0) + cpuSecondsOf(pid) - (this.start.get(pid) ?? 0));
    }
    return byRole;
  }
}

/** Adds one reading of PgRoleCpuMeter to a running sum. */
export function addRoles(sum: Map<string, number>, reading: Map<string, number>): void {
  for (const [role, s] of reading) sum.set(role, (sum.get(role) ?? 0) + s);
}

/** "backends 120, checkpointer 9.1, walwriter 2.0 µs/msg". */
export function rolesPerMessage(byRole: Map<string, number>, messages: number): string {
  return [...byRole.entries()]
    .filter(([, s]) => s > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([role, s]) => `${role} ${((s * 1e6) / Math.max(1, messages)).toFixed(1)}`)
    .join(", ") + " µs/msg";
}

/** The statements that were sent most, per message: a Markdown table for the results file. */
export function statementTable(w: PgWork, messages: number, top = 15): string {
  const rows = [...w.byStatement.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  const cell = (q: string) => q.replace(/\s+/g, " ").slice(0, 140).replace(/\|/g, "\\|");
  return [
    `${messages} messages: ${workPerMessage(w, messages)}. The statements sent most (pg_stat_statements, normalised):`,
    "",
    "| per message | execution µs per message | statement |",
    "|---:|---:|---|",
    ...rows.map(
      ([q, calls]) =>
        `| ${(calls / Math.max(1, messages)).toFixed(3)} | ${(((w.execMs.get(q) ?? 0) * 1000) / Math.max(1, messages)).toFixed(1)} | \`${cell(q)}\` |`,
    ),
    "",
    "plpgsql functions and triggers (pg_stat_user_functions, their own time):",
    "",
    "| function | calls per message | µs per message |",
    "|---|---:|---:|",
    ...[...w.functions.entries()].map(
      ([name, f]) =>
        `| ${name} | ${(f.calls / Math.max(1, messages)).toFixed(3)} | ${((f.selfMs * 1000) / Math.max(1, messages)).toFixed(1)} |`,
    ),
  ].join("\n");
}
