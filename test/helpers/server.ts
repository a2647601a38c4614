import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { request } from "undici";
import { loadConfig } from "../../src/config.js";
import type { Clock } from "../../src/domain/clock.js";
import { type Ferry, startFerry } from "../../src/server.js";

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

/**
 * Starts the real Ferry server in this process on 127.0.0.1 (port 0) with a fresh SQLite file.
 * `env` overrides any configuration variable; `dataDir` reuses a previous server's data (restart tests).
 */
export async function startTestServer(
  opts: { env?: Record<string, string>; clock?: Clock; dataDir?: string } = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "ferry-test-"));
  const config = loadConfig({
    FERRY_PORT: "0",
    FERRY_HOST: "127.0.0.1",
    DATABASE_URL: `sqlite:${join(dataDir, "ferry.db")}`,
    FERRY_TOKEN: TEST_TOKEN,
    FERRY_CURRENT_SIGNING_KEY: TEST_CURRENT_KEY,
    FERRY_NEXT_SIGNING_KEY: TEST_NEXT_KEY,
    FERRY_LOG_LEVEL: "silent",
    FERRY_SHUTDOWN_GRACE_MS: "2000",
    ...opts.env,
  });
  const options: Parameters<typeof startFerry>[1] = { log: pino({ level: process.env.FERRY_TEST_LOG ?? "silent" }) };
  if (opts.clock) options.clock = opts.clock;
  const ferry = await startFerry(config, options);
  const token = config.token!;
  return {
    ferry,
    url: ferry.url,
    token,
    dataDir,
    call: (method, path, callOpts) => httpCall(ferry.url, method, path, callOpts, token),
    stop: async (stopOpts) => {
      await ferry.stop();
      if (!stopOpts?.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
