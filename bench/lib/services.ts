import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Child, freePort, run, startChild, tail } from "./proc.js";

/**
 * Database servers of the peers, from Debian's packages: installed with apt-get when missing, started on a free
 * port on 127.0.0.1 in a scratch directory, and stopped afterwards by pid.
 */

async function aptInstall(pkg: string, log: (m: string) => void): Promise<void> {
  log(`installing ${pkg} with apt-get (not found) …`);
  const update = await run("apt-get", ["update", "-qq"], { timeoutMs: 300_000 });
  if (update.code !== 0) log(`apt-get update failed (${update.code}); trying the install anyway`);
  const install = await run("apt-get", ["install", "-y", "-qq", pkg], {
    timeoutMs: 600_000,
    env: { DEBIAN_FRONTEND: "noninteractive" },
  });
  if (install.code !== 0) throw new Error(`apt-get install ${pkg} failed:\n${install.output.slice(-1000)}`);
}

/** Sends one line to a TCP port and resolves with the first chunk of the answer (bounded by `timeoutMs`). */
function ask(port: number, line: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const timer = setTimeout(() => {
      socket.destroy();
      resolve("");
    }, timeoutMs);
    socket.once("connect", () => socket.write(line));
    socket.once("data", (d) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(d.toString());
    });
    socket.once("error", () => {
      clearTimeout(timer);
      resolve("");
    });
  });
}

export interface RedisServer {
  port: number;
  child: Child;
  /** The durability settings it runs with, for the results file. */
  settings: string;
  stop(): Promise<string>;
}

/** Redis's AOF fsync policies the bench runs BullMQ under (issue 29: both, named as such). */
export type RedisFsync = "everysec" | "always";

/**
 * redis-server with AOF on, as the Redis persistence docs and BullMQ's production guide recommend:
 * `appendonly yes`, RDB snapshots off, `maxmemory-policy noeviction` (BullMQ requires it), and the AOF fsync policy
 * asked for: `everysec` (Redis's recommended default: at most one second of acknowledged writes lost on a crash) or
 * `always` (an fsync before each write is acknowledged: the durability Ferry promises).
 */
export async function startRedis(
  workDir: string,
  log: (m: string) => void,
  fsyncPolicy: RedisFsync = "everysec",
): Promise<RedisServer> {
  if (!existsSync("/usr/bin/redis-server")) await aptInstall("redis-server", log);
  const dir = mkdtempSync(join(workDir, "redis-"));
  const port = await freePort();
  const settings = `appendonly yes, appendfsync ${fsyncPolicy}, save '' (no RDB), maxmemory-policy noeviction`;
  const child = startChild(
    "redis-server",
    "/usr/bin/redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--appendonly",
      "yes",
      "--appendfsync",
      fsyncPolicy,
      "--save",
      "",
      "--maxmemory-policy",
      "noeviction",
      "--daemonize",
      "no",
      "--protected-mode",
      "yes",
    ],
    { logPath: join(dir, "redis.log") },
  );
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if ((await ask(port, "PING\r\n", 500)).startsWith("+PONG")) {
      return { port, child, settings, stop: () => child.stop(10_000) };
    }
    await sleep(100);
  }
  await child.stop(1000);
  throw new Error(`redis-server did not answer PING:\n${tail(child.logPath)}`);
}

const PG_BIN = "/usr/lib/postgresql/15/bin";

export interface PostgresServer {
  port: number;
  url: string;
  dataDir: string;
  settings: string;
  /** The postmaster's pid (its backends are its children). */
  pid(): number;
  stop(): Promise<void>;
}

/**
 * A throwaway PostgreSQL 15 cluster (/work/shared/docs/dependencies.md): initdb as the postgres user, pg_ctl
 * start on a free port on 127.0.0.1. Durability stays at PostgreSQL's defaults (fsync on, synchronous_commit on,
 * full_page_writes on): every acknowledged job is on disk, as pg-boss's docs assume. pg_stat_statements is loaded
 * (for every peer alike) so a run can count the statements it cost, and plpgsql functions are timed (pg-stats.ts).
 * Stopped with `pg_ctl stop -m fast`, which signals the postmaster pid recorded in its postmaster.pid.
 */
export async function startPostgres(workDir: string, log: (m: string) => void): Promise<PostgresServer> {
  if (!existsSync(`${PG_BIN}/initdb`)) await aptInstall("postgresql", log);
  const base = mkdtempSync(join(workDir, "pg-"));
  chmodSync(workDir, 0o755);
  chmodSync(base, 0o755);
  const ids = await run("id", ["-u", "postgres"]);
  const gids = await run("id", ["-g", "postgres"]);
  chownSync(base, Number(ids.output.trim()), Number(gids.output.trim()));
  const data = join(base, "data");
  const asPostgres = (cmd: string, timeoutMs = 120_000) => run("su", ["postgres", "-c", cmd], { timeoutMs });
  const init = await asPostgres(`${PG_BIN}/initdb -D ${data} -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8`);
  if (init.code !== 0) throw new Error(`initdb failed:\n${init.output.slice(-1000)}`);
  const port = await freePort();
  const start = await asPostgres(
    `${PG_BIN}/pg_ctl -D ${data} -l ${base}/log -w -t 60 -o "-p ${port} -k ${base} -c listen_addresses=127.0.0.1 -c max_connections=100 -c shared_preload_libraries=pg_stat_statements -c track_functions=pl" start`,
  );
  if (start.code !== 0) throw new Error(`pg_ctl start failed:\n${start.output.slice(-1000)}\n${tail(`${base}/log`)}`);
  const pid = () => Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir: data,
    settings: "PostgreSQL 15 defaults: fsync on, synchronous_commit on, full_page_writes on; pg_stat_statements loaded",
    pid,
    stop: async () => {
      const stop = await asPostgres(`${PG_BIN}/pg_ctl -D ${data} -m fast -w -t 30 stop`, 60_000);
      if (stop.code !== 0) log(`pg_ctl stop failed: ${stop.output.slice(-300)}`);
    },
  };
}

/** Pids of a process's children (PostgreSQL backends of a postmaster), from /proc. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter((s) => s !== "")
      .map(Number);
  } catch {
    return [];
  }
}
