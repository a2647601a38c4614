/**
 * The one reader of process.env. Every option is documented here with its default and mirrored in
 * docs/configuration.md (a test keeps the two in sync). A bad value stops start-up with the variable's name.
 */

export type Dialect = "neutral" | "upstash";
export type SqliteSynchronous = "FULL" | "NORMAL";

export interface Config {
  /** TCP port of both APIs. (Default: 8080) */
  port: number;
  /** Interface to bind. (Default: 0.0.0.0) */
  host: string;
  /** `sqlite:<path>` or `postgres://…`. (Default: sqlite:./data/ferry.db) */
  databaseUrl: string;
  /** Token of the default messaging account; generated, stored and printed once when absent. */
  token: string | undefined;
  /** Signing keys of the default account; generated, stored and printed once when absent. */
  currentSigningKey: string | undefined;
  nextSigningKey: string | undefined;
  /** Wire names: `neutral` (Svc- headers) or `upstash` (the official SDKs' names). (Default: neutral) */
  dialect: Dialect;
  /** SQLite durability: FULL fsyncs every commit; NORMAL may lose the last commits on power loss. (Default: FULL) */
  sqliteSynchronous: SqliteSynchronous;
  /** PostgreSQL connections one node may hold (writes, reads, one more for LISTEN). (Default: 10) */
  pgPoolSize: number;
  /** pino level. (Default: info) */
  logLevel: string;
  /** How long SIGTERM waits for in-flight deliveries before closing the store. (Default: 10000 ms) */
  shutdownGraceMs: number;
  /** Deliveries one node runs at once. (Default: 512) */
  deliveryConcurrency: number;
  /** How often a node looks for due messages written by other nodes. (Default: 1000 ms) */
  pollIntervalMs: number;
  /** How long a lease lasts without renewal; a dead node's messages are taken over after this. (Default: 15000 ms) */
  leaseMs: number;
  /** Message logs older than this are deleted. (Default: 14 days) */
  logRetentionMs: number;
  /** Deduplication window of Svc-Deduplication-Id and content-based deduplication. (Default: 10 minutes) */
  dedupWindowMs: number;
  /** Plan of the default account. (Default: paid) */
  defaultPlan: string;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function str(env: Env, key: string, fallback: string): string {
  const value = env[key]?.trim();
  return value === undefined || value === "" ? fallback : value;
}

function optional(env: Env, key: string): string | undefined {
  const value = env[key]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function int(env: Env, key: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, key);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`config error: ${key} must be an integer in ${min}..${max} (got "${raw}")`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, key: string, fallback: T, allowed: readonly T[]): T {
  const raw = optional(env, key);
  if (raw === undefined) return fallback;
  const match = allowed.find((a) => a.toLowerCase() === raw.toLowerCase());
  if (match === undefined) {
    throw new ConfigError(`config error: ${key} must be one of ${allowed.join(", ")} (got "${raw}")`);
  }
  return match;
}

function signingKey(env: Env, key: string): string | undefined {
  const raw = optional(env, key);
  if (raw !== undefined && raw.length < 16) {
    throw new ConfigError(`config error: ${key} must be at least 16 characters (got ${raw.length})`);
  }
  return raw;
}

function databaseUrl(env: Env): string {
  const raw = str(env, "DATABASE_URL", "sqlite:./data/ferry.db");
  if (!/^sqlite:.+/.test(raw) && !/^postgres(ql)?:\/\/.+/.test(raw)) {
    throw new ConfigError(`config error: DATABASE_URL must be sqlite:<path> or postgres://… (got "${raw}")`);
  }
  return raw;
}

const DAY_MS = 86_400_000;

export function loadConfig(env: Env = process.env): Config {
  return {
    port: int(env, "FERRY_PORT", 8080, 0, 65535),
    host: str(env, "FERRY_HOST", "0.0.0.0"),
    databaseUrl: databaseUrl(env),
    token: optional(env, "FERRY_TOKEN"),
    currentSigningKey: signingKey(env, "FERRY_CURRENT_SIGNING_KEY"),
    nextSigningKey: signingKey(env, "FERRY_NEXT_SIGNING_KEY"),
    dialect: oneOf(env, "FERRY_DIALECT", "neutral", ["neutral", "upstash"] as const),
    sqliteSynchronous: oneOf(env, "FERRY_SQLITE_SYNCHRONOUS", "FULL", ["FULL", "NORMAL"] as const),
    pgPoolSize: int(env, "FERRY_PG_POOL_SIZE", 10, 2, 1000),
    logLevel: oneOf(env, "FERRY_LOG_LEVEL", "info", ["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    shutdownGraceMs: int(env, "FERRY_SHUTDOWN_GRACE_MS", 10_000, 0, 3_600_000),
    deliveryConcurrency: int(env, "FERRY_DELIVERY_CONCURRENCY", 512, 1, 100_000),
    pollIntervalMs: int(env, "FERRY_POLL_INTERVAL_MS", 1000, 10, 600_000),
    leaseMs: int(env, "FERRY_LEASE_MS", 15_000, 1000, 3_600_000),
    logRetentionMs: int(env, "FERRY_LOG_RETENTION_MS", 14 * DAY_MS, 60_000, 365 * DAY_MS),
    dedupWindowMs: int(env, "FERRY_DEDUP_WINDOW_MS", 10 * 60_000, 0, 365 * DAY_MS),
    defaultPlan: str(env, "FERRY_DEFAULT_PLAN", "paid"),
  };
}

/** Documented options, name → default, for docs/configuration.md and its sync test. */
export const configDefaults: Record<string, string> = {
  FERRY_PORT: "8080",
  FERRY_HOST: "0.0.0.0",
  DATABASE_URL: "sqlite:./data/ferry.db",
  FERRY_TOKEN: "(generated on first start, stored, printed once)",
  FERRY_CURRENT_SIGNING_KEY: "(generated on first start, stored, printed once)",
  FERRY_NEXT_SIGNING_KEY: "(generated on first start, stored, printed once)",
  FERRY_DIALECT: "neutral",
  FERRY_SQLITE_SYNCHRONOUS: "FULL",
  FERRY_PG_POOL_SIZE: "10",
  FERRY_LOG_LEVEL: "info",
  FERRY_SHUTDOWN_GRACE_MS: "10000",
  FERRY_DELIVERY_CONCURRENCY: "512",
  FERRY_POLL_INTERVAL_MS: "1000",
  FERRY_LEASE_MS: "15000",
  FERRY_LOG_RETENTION_MS: "1209600000",
  FERRY_DEDUP_WINDOW_MS: "600000",
  FERRY_DEFAULT_PLAN: "paid",
};
