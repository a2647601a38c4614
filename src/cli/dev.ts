import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError } from "../config.js";
import { lockSqliteFile } from "../store/sqlite/process-lock.js";

/**
 * `ferry dev`: a durable drop-in for the hosted service's local development server (README, docs/operations.md).
 * The credentials are the well-known ones the official JS SDK 2.12 carries for its dev server, so code set up for
 * that server (or the SDK's own QSTASH_DEV mode) works unchanged. Unlike that server, data survives a restart.
 */
export const DEV_CREDENTIALS = {
  token: "eyJVc2VySUQiOiJkZWZhdWx0VXNlciIsIlBhc3N3b3JkIjoiZGVmYXVsdFBhc3N3b3JkIn0=",
  currentSigningKey: "sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r",
  nextSigningKey: "sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs",
} as const;

const USAGE = "usage: ferry dev [--port <port>] [--dialect upstash|neutral] [--data <dir>] [--reset]";

/** Every destination, the cloud-metadata ranges included (they otherwise need an explicit entry). */
const ALLOW_EVERYTHING = "0.0.0.0/0,::/0,169.254.0.0/16,fe80::/10";

export interface DevOptions {
  port: number;
  dialect: "upstash" | "neutral";
  dataDir: string;
  reset: boolean;
}

export function parseDevArgs(args: string[], cwd = process.cwd()): DevOptions {
  const options: DevOptions = { port: 8080, dialect: "upstash", dataDir: resolve(cwd, ".ferry-dev"), reset: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (name === "--reset") {
      options.reset = true;
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === "") throw new ConfigError(`ferry dev: ${name} needs a value\n${USAGE}`);
    if (name === "--port") {
      const port = Number(value);
      if (!/^\d+$/.test(value) || port > 65535) throw new ConfigError(`ferry dev: --port must be 0..65535 (got "${value}")`);
      options.port = port;
    } else if (name === "--dialect") {
      if (value !== "upstash" && value !== "neutral") {
        throw new ConfigError(`ferry dev: --dialect must be upstash or neutral (got "${value}")`);
      }
      options.dialect = value;
    } else if (name === "--data") {
      options.dataDir = resolve(cwd, value);
    } else {
      throw new ConfigError(`ferry dev: unknown argument ${arg}\n${USAGE}`);
    }
  }
  return options;
}

/**
 * The environment `ferry dev` runs Ferry with: the caller's environment (FERRY_LOG_LEVEL and the like still apply),
 * overridden by what makes it the dev server. `localhost` makes Fastify listen on every address localhost resolves
 * to (127.0.0.1 and ::1), and on nothing reachable from another machine.
 */
export function devEnvironment(options: DevOptions, env: Record<string, string | undefined>): Record<string, string | undefined> {
  if (options.reset) {
    // Never under a running dev server: its lock refuses the reset (StartupError) before anything is deleted.
    lockSqliteFile(resolve(options.dataDir, "ferry.db"), Date.now()).release();
    rmSync(options.dataDir, { recursive: true, force: true });
  }
  return {
    FERRY_LOG_LEVEL: "warn",
    ...env,
    FERRY_PORT: String(options.port),
    FERRY_HOST: "localhost",
    DATABASE_URL: `sqlite:${resolve(options.dataDir, "ferry.db")}`,
    FERRY_TOKEN: DEV_CREDENTIALS.token,
    FERRY_CURRENT_SIGNING_KEY: DEV_CREDENTIALS.currentSigningKey,
    FERRY_NEXT_SIGNING_KEY: DEV_CREDENTIALS.nextSigningKey,
    FERRY_DIALECT: options.dialect,
    FERRY_DESTINATION_ALLOW: ALLOW_EVERYTHING,
  };
}

/** What `ferry dev` prints once it listens: where, the credentials, a sample curl and the console's address. */
export function devBanner(options: DevOptions, port: number): string {
  const base = `http://127.0.0.1:${port}`;
  const names =
    options.dialect === "upstash"
      ? { url: "QSTASH_URL", token: "QSTASH_TOKEN", current: "QSTASH_CURRENT_SIGNING_KEY", next: "QSTASH_NEXT_SIGNING_KEY" }
      : { url: "FERRY_URL", token: "FERRY_TOKEN", current: "FERRY_CURRENT_SIGNING_KEY", next: "FERRY_NEXT_SIGNING_KEY" };
  return [
    `Ferry dev server listening on ${base} (also http://localhost:${port}), ${options.dialect} dialect`,
    `Data: ${options.dataDir} (kept across restarts; --reset starts empty). Every destination is allowed.`,
    "",
    `${names.url}=${base}`,
    `${names.token}=${DEV_CREDENTIALS.token}`,
    `${names.current}=${DEV_CREDENTIALS.currentSigningKey}`,
    `${names.next}=${DEV_CREDENTIALS.nextSigningKey}`,
    "",
    "Try:",
    `  curl -X POST ${base}/v2/publish/https://example.com/hook \\`,
    `    -H "Authorization: Bearer ${DEV_CREDENTIALS.token}" -d 'hello'`,
    "",
    `Console: http://localhost:${port}/console   API reference: http://localhost:${port}/docs`,
    "",
  ].join("\n");
}
