import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino, { type Logger } from "pino";
import { request } from "undici";
import { loadConfig } from "../../src/config.js";
import type { Clock } from "../../src/domain/clock.js";
import { type Ferry, startFerry } from "../../src/server.js";
import { track } from "./leaks.js";
import { dropDatabase, freshDatabase, postgresAvailable } from "./postgres.js";

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON body (undefined when the body is empty or not JSON). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience; every test asserts the shape it reads
  json: any;
}

export interface TestServer {
  ferry: Ferry;
  url: string;
  token: string;
  dataDir: string;
  /** Calls Ferry with the default account's token unless `token` is given (null sends none). */
  call(
    method: string,
    path: string,
    opts?: { headers?: Record<string, string>; body?: string | Buffer; token?: string | null },
  ): Promise<HttpResult>;
  /** Stops the server; the data directory is removed unless `keepData`. */
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

export const TEST_TOKEN = "test-token-0123456789";
export const TEST_CURRENT_KEY = "sig_testCurrentKey000000000000";
export const TEST_NEXT_KEY = "sig_testNextKey000000000000000";

export async function httpCall(
  base: string,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer; token?: string | null } = {},
  defaultToken?: string,
): Promise<HttpResult> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  const token = opts.token === undefined ? defaultToken : opts.token;
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await request(`${base}${path}`, {
    method: method as "GET",
    headers,
    body: opts.body,
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

/** Which adapter test servers use by default: FERRY_TEST_STORE=postgres runs the e2e suites on PostgreSQL. */
export const testStore: "sqlite" | "postgres" =
  process.env.FERRY_TEST_STORE === "postgres" && postgresAvailable() ? "postgres" : "sqlite";

/**
 * The database of a test server's data directory. SQLite: a file in it. PostgreSQL: a fresh database on the test
 * cluster, whose URL is kept in the directory, so a restart with the same `dataDir` finds the same data; it is
 * dropped with the directory.
 */
async function databaseFor(
  dataDir: string,
  store: "sqlite" | "postgres",
): Promise<{ url: string; drop(): Promise<void> }> {
  const marker = join(dataDir, "database-url");
  if (existsSync(marker)) {
    const { url, name, admin } = JSON.parse(readFileSync(marker, "utf8")) as {
      url: string;
      name: string;
      admin: string;
    };
    return { url, drop: () => dropDatabase(admin, name) };
  }
  if (store === "sqlite") return { url: `sqlite:${join(dataDir, "ferry.db")}`, drop: async () => {} };
  const db = await freshDatabase();
  writeFileSync(marker, JSON.stringify({ url: db.url, name: db.name, admin: db.adminUrl }));
  return { url: db.url, drop: db.drop };
}

/**
 * Starts the real Ferry server in this process on 127.0.0.1 (port 0) with a fresh database: a SQLite file, or a
 * PostgreSQL database when `store` (default: FERRY_TEST_STORE) says postgres.
 * `env` overrides any configuration variable (DATABASE_URL too: several servers on one database are several nodes);
 * `dataDir` reuses a previous server's data (restart tests).
 */
export async function startTestServer(
  opts: {
    env?: Record<string, string>;
    clock?: Clock;
    dataDir?: string;
    store?: "sqlite" | "postgres";
    /** The server's logger, e.g. src/logger.ts createLogger writing to a stream the test reads (failure-logs.test.ts). */
    log?: Logger;
  } = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "ferry-test-"));
  const database = opts.env?.DATABASE_URL
    ? { url: opts.env.DATABASE_URL, drop: async () => {} }
    : await databaseFor(dataDir, opts.store ?? testStore);
  const config = loadConfig({
    FERRY_PORT: "0",
    FERRY_HOST: "127.0.0.1",
    DATABASE_URL: database.url,
    FERRY_TOKEN: TEST_TOKEN,
    FERRY_CURRENT_SIGNING_KEY: TEST_CURRENT_KEY,
    FERRY_NEXT_SIGNING_KEY: TEST_NEXT_KEY,
    FERRY_LOG_LEVEL: "silent",
    FERRY_SHUTDOWN_GRACE_MS: "2000",
    ...opts.env,
  });
  const options: Parameters<typeof startFerry>[1] = {
    log: opts.log ?? pino({ level: process.env.FERRY_TEST_LOG ?? "silent" }),
  };
  if (opts.clock) options.clock = opts.clock;
  const ferry = await startFerry(config, options);
  track(
    `server ${ferry.url}`,
    () => ferry.app.server.listening || Object.values(ferry.loops).some((loop) => loop.running),
  );
  const token = config.token!;
  return {
    ferry,
    url: ferry.url,
    token,
    dataDir,
    call: (method, path, callOpts) => httpCall(ferry.url, method, path, callOpts, token),
    stop: async (stopOpts) => {
      await ferry.stop();
      if (!stopOpts?.keepData) {
        await database.drop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}
