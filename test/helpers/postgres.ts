import { execFile, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { inject } from "vitest";

/**
 * Throwaway PostgreSQL clusters and databases for tests. A cluster is initdb'd into a temp dir and started on a
 * free 127.0.0.1 port (as the `postgres` user when we are root: initdb refuses root). Every test gets a FRESH
 * database on it (`freshDatabase`), dropped afterwards.
 *
 * Where the cluster comes from, in order: `FERRY_TEST_PG_URL` (an admin URL to a running cluster you manage), else
 * the one test/helpers/postgres-global-setup.ts started for this run. Without PostgreSQL binaries the PostgreSQL
 * tests are skipped with a warning, except under CI=true, where the run fails.
 */

const run = promisify(execFile);

declare module "vitest" {
  export interface ProvidedContext {
    /** Admin URL of the run's cluster ("" when none could be started outside CI). */
    ferryPgAdminUrl: string;
  }
}

/** Directory of initdb/pg_ctl: FERRY_PG_BIN, else the newest /usr/lib/postgresql/<v>/bin (Debian), else none. */
export function findPgBin(): string | undefined {
  const configured = process.env.FERRY_PG_BIN;
  if (configured) return existsSync(join(configured, "initdb")) ? configured : undefined;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}

const asRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** Runs a PostgreSQL binary, as the `postgres` user when we are root. */
async function pgRun(bin: string, args: string[]): Promise<string> {
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  try {
    const { stdout } = await run(file, argv, { timeout: 60_000 });
    return stdout;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`${bin} ${args.join(" ")} failed: ${e.stderr || e.message}`);
  }
}

/** A port free on 127.0.0.1 right now (another process may take it before it is used). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export interface PgCluster {
  adminUrl: string;
  port: number;
  dir: string;
  /** pg_ctl stop -m fast: every connection is cut, like a database restart. */
  stop(): Promise<void>;
  /** pg_ctl stop -m immediate: the server processes quit without a checkpoint, like a crash; start() recovers. */
  crash(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and removes its directory. */
  destroy(): Promise<void>;
  /** The same, synchronously: for a process 'exit' handler, so an interrupted run leaves no server behind. */
  destroySync(): void;
}

export interface ClusterOptions {
  /**
   * synchronous_commit on: a commit is in the WAL (the OS's page cache; fsync stays off) before it is acknowledged,
   * so a crash() of the server loses nothing committed. Off by default: faster, and enough for clean stops.
   */
  durableCommits?: boolean;
}

/** initdb + pg_ctl start on a free port; fsync off (test data only: the machine itself never crashes here). */
export async function startCluster(opts: ClusterOptions = {}): Promise<PgCluster> {
  const binDir = findPgBin();
  if (!binDir) throw new Error("PostgreSQL binaries not found (apt-get install postgresql, or set FERRY_PG_BIN)");
  const dir = mkdtempSync(join(tmpdir(), "ferry-pg-"));
  if (asRoot) await run("chown", ["postgres:postgres", dir]);
  const data = join(dir, "data");
  await pgRun(join(binDir, "initdb"), [
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    "postgres",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C.UTF-8",
  ]);
  let port = 0;
  const options = () =>
    [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off",
      `-c synchronous_commit=${opts.durableCommits ? "on" : "off"}`,
      "-c full_page_writes=off",
      "-c max_connections=300",
    ].join(" ");
  const pgCtl = (...args: string[]) => pgRun(join(binDir, "pg_ctl"), ["-D", data, ...args]);
  const start = () => pgCtl("-l", join(dir, "log"), "-w", "-t", "30", "-o", options(), "start").then(() => {});
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await start();
      break;
    } catch (error) {
      if (attempt >= 3) throw error; // the port was taken between freePort() and start: try another
    }
  }
  let stopped = false;
  const pgCtlPath = join(binDir, "pg_ctl");
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    stop: async () => {
      await pgCtl("-m", "fast", "-w", "stop");
    },
    crash: async () => {
      await pgCtl("-m", "immediate", "-w", "stop");
    },
    start,
    destroy: async () => {
      if (stopped) return;
      stopped = true;
      await pgCtl("-m", "immediate", "-w", "stop").catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
    destroySync: () => {
      if (stopped) return;
      stopped = true;
      const args = ["-D", data, "-m", "immediate", "-w", "stop"];
      if (asRoot) spawnSync("runuser", ["-u", "postgres", "--", pgCtlPath, ...args], { stdio: "ignore" });
      else spawnSync(pgCtlPath, args, { stdio: "ignore" });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Admin URL of this run's cluster, or undefined when PostgreSQL tests cannot run here (never under CI=true). */
export function testClusterUrl(): string | undefined {
  const url = process.env.FERRY_TEST_PG_URL || inject("ferryPgAdminUrl");
  if (url) return url;
  if (process.env.CI === "true") throw new Error("PostgreSQL tests cannot run: no cluster (CI=true requires one)");
  return undefined;
}

let warned = false;

/**
 * True when PostgreSQL tests can run. Otherwise (outside CI only) it warns once per test file: PostgreSQL tests are
 * skipped and FERRY_TEST_STORE=postgres servers run on SQLite, never silently.
 */
export function postgresAvailable(): boolean {
  if (testClusterUrl()) return true;
  if (!warned) {
    warned = true;
    console.warn("PostgreSQL not available (no binaries, no FERRY_TEST_PG_URL): PostgreSQL tests are skipped");
  }
  return false;
}

/** URL of the same cluster, another database. */
export function databaseUrl(adminUrl: string, database: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface FreshDatabase {
  url: string;
  name: string;
  adminUrl: string;
  drop(): Promise<void>;
}

/** CREATE DATABASE ferry_<random> on the cluster; drop() removes it, cutting any connection still open. */
export async function freshDatabase(adminUrl = testClusterUrl()): Promise<FreshDatabase> {
  if (!adminUrl) throw new Error("no PostgreSQL cluster for this test run");
  const name = `ferry_${randomBytes(6).toString("hex")}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  return {
    name,
    adminUrl,
    url: databaseUrl(adminUrl, name),
    drop: () => dropDatabase(adminUrl, name),
  };
}

/** Drops a test database, cutting any connection still open to it. */
export const dropDatabase = (adminUrl: string, name: string) =>
  adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
