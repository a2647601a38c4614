/**
 * The one reader of process.env. Every option is documented here with its default and mirrored in
 * docs/configuration.md (a test keeps the two in sync). A bad value stops start-up with the variable's name.
 */

import { availableParallelism } from "node:os";
import type { DialectName } from "./domain/dialect.js";
import { EgressConfigError, parseEgressPolicy } from "./domain/egress-policy.js";
import { isLimitField, type PlanName, type PlanOverrides, planNames, UNLIMITED } from "./domain/plans.js";

export type Dialect = DialectName;
export type AccountRegion = "eu-central-1" | "us-east-1";
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
  /**
   * The names of what no request decided: `neutral` (Svc- headers) or `upstash` (the official SDKs' names). Both are
   * understood either way (docs/messaging.md "Dialects"). (Default: neutral)
   */
  dialect: Dialect;
  /** SQLite durability: FULL fsyncs every commit; NORMAL may lose the last commits on power loss. (Default: FULL) */
  sqliteSynchronous: SqliteSynchronous;
  /** PostgreSQL connections one node may hold (writes, reads, one more for LISTEN). (Default: 10) */
  pgPoolSize: number;
  /**
   * Run the storage adapter in its own worker thread (docs/threading.md); `off` keeps it on the main thread, for
   * debugging and for measuring what the thread buys. (Default: off)
   */
  storeThread: boolean;
  /**
   * Sign and send deliveries in their own worker thread, the egress thread (docs/threading.md); `off` sends them
   * from the main thread. (Default: on)
   */
  egressThread: boolean;
  /** pino level. (Default: info) */
  logLevel: string;
  /** Log to this file (appended, reopened on SIGHUP) instead of stdout. (Default: stdout) */
  logFile: string | undefined;
  /** How long SIGTERM waits for in-flight deliveries before closing the store. (Default: 10000 ms) */
  shutdownGraceMs: number;
  /** Deliveries one node runs at once. (Default: 512) */
  deliveryConcurrency: number;
  /** Attempts one node runs at once to one destination (scheme, host, port); see docs/reliability.md. */
  destinationConcurrency: number;
  /** Ingress limits (src/http/ingress-limits.ts): request headers, whole request, connections at once. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  maxConnections: number;
  /** How often a node looks for due messages written by other nodes. (Default: 1000 ms) */
  pollIntervalMs: number;
  /** How long a lease lasts without renewal; a dead node's messages are taken over after this. (Default: 15000 ms) */
  leaseMs: number;
  /** Message logs older than this are deleted. (Default: 14 days) */
  logRetentionMs: number;
  /** Deduplication window of Svc-Deduplication-Id and content-based deduplication. (Default: 10 minutes) */
  dedupWindowMs: number;
  /**
   * Where deliveries and callbacks may connect: CIDRs and host names, comma-separated. (Default: everything except
   * the cloud-metadata ranges 169.254.0.0/16 and fe80::/10, which need an explicit entry.)
   */
  destinationAllow: string | undefined;
  /** How often the scheduler looks for due cron ticks; a tick fires at most this late. (Default: 1000 ms) */
  schedulerIntervalMs: number;
  /** Plan of the default account and of customers created without --plan. (Default: paid) */
  defaultPlan: PlanName;
  /** E-mail of the first customer (management API Basic-auth user). (Default: admin@ferry.local) */
  adminEmail: string | undefined;
  /** API key of the first customer; generated, stored hashed and printed once when absent. */
  adminApiKey: string | undefined;
  /** Per-plan limit overrides from FERRY_PLAN_<PLAN>_<FIELD>=<integer|unlimited>. (Default: none) */
  planOverrides: PlanOverrides;
  /** Price in dollars per 100,000 messages for usage billing; the free plan is never billed. (Default: 1) */
  pricePer100k: number;
  /** `region` of messaging accounts this server creates. (Default: eu-central-1) */
  region: AccountRegion;
  /**
   * OpenAI-compatible embeddings endpoint of search indexes (`…/v1/embeddings`); unset, the built-in lexical embedder
   * is used. (Default: none)
   */
  embeddingsUrl: string | undefined;
  /** Model name sent to the embeddings endpoint. (Default: text-embedding-3-small) */
  embeddingsModel: string;
  /** Bearer key of the embeddings endpoint. (Default: none) */
  embeddingsApiKey: string | undefined;
  /** Bearer token `GET /metrics` requires; unset, /metrics answers without one. (Default: none) */
  metricsToken: string | undefined;
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

/**
 * `auto`: the egress thread only when this process may run on more than one CPU. On one, the thread cannot run beside
 * the main thread and its hand-overs only add work (docs/threading.md, "On one CPU").
 */
export function egressThreadWanted(setting: "auto" | "on" | "off", cpus: number): boolean {
  return setting === "on" || (setting === "auto" && cpus > 1);
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

function decimal(env: Env, key: string, fallback: number): number {
  const raw = optional(env, key);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !Number.isFinite(value)) {
    throw new ConfigError(`config error: ${key} must be a non-negative number (got "${raw}")`);
  }
  return value;
}

function adminEmail(env: Env): string | undefined {
  const raw = optional(env, "FERRY_ADMIN_EMAIL");
  if (raw !== undefined && !/^[^\s:@]+@[^\s:@]+$/.test(raw)) {
    throw new ConfigError(`config error: FERRY_ADMIN_EMAIL must be an e-mail address without ":" (got "${raw}")`);
  }
  return raw;
}

function adminApiKey(env: Env): string | undefined {
  const raw = optional(env, "FERRY_ADMIN_API_KEY");
  if (raw !== undefined && raw.length < 16) {
    throw new ConfigError(`config error: FERRY_ADMIN_API_KEY must be at least 16 characters (got ${raw.length})`);
  }
  return raw;
}

const PLAN_PREFIX = "FERRY_PLAN_";

/**
 * FERRY_PLAN_<PLAN>_<FIELD>=<value>: PLAN is a plan name upper-cased (FREE, PAID, MSGSVC_FIXED_1M …), FIELD a limit
 * field upper-cased (MAX_REQUESTS_PER_DAY …), value a non-negative integer or `unlimited`.
 */
function planOverrides(env: Env): PlanOverrides {
  const out: PlanOverrides = {};
  // Longest first: MSGSVC_FIXED is a prefix of MSGSVC_FIXED_1M.
  const names = [...planNames].sort((a, b) => b.length - a.length);
  for (const key of Object.keys(env).sort()) {
    if (!key.startsWith(PLAN_PREFIX)) continue;
    const raw = optional(env, key);
    if (raw === undefined) continue;
    const rest = key.slice(PLAN_PREFIX.length);
    const plan = names.find((name) => rest.startsWith(`${name.toUpperCase()}_`));
    if (plan === undefined) {
      throw new ConfigError(
        `config error: ${key} names no plan; use FERRY_PLAN_<PLAN>_<FIELD> with PLAN one of ${planNames.map((p) => p.toUpperCase()).join(", ")}`,
      );
    }
    const field = rest.slice(plan.length + 1).toLowerCase();
    if (!isLimitField(field)) {
      throw new ConfigError(`config error: ${key}: "${field}" is not a plan limit field`);
    }
    const value = raw.toLowerCase() === "unlimited" ? UNLIMITED : Number(raw);
    if (!(raw.toLowerCase() === "unlimited" || /^\d+$/.test(raw)) || !Number.isSafeInteger(value)) {
      throw new ConfigError(`config error: ${key} must be a non-negative integer or "unlimited" (got "${raw}")`);
    }
    out[plan] = { ...out[plan], [field]: value };
  }
  return out;
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
    storeThread: oneOf(env, "FERRY_STORE_THREAD", "off", ["on", "off"] as const) === "on",
    egressThread: egressThreadWanted(
      oneOf(env, "FERRY_EGRESS_THREAD", "auto", ["auto", "on", "off"] as const),
      availableParallelism(),
    ),
    logLevel: oneOf(env, "FERRY_LOG_LEVEL", "info", ["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    logFile: optional(env, "FERRY_LOG_FILE"),
    shutdownGraceMs: int(env, "FERRY_SHUTDOWN_GRACE_MS", 10_000, 0, 3_600_000),
    deliveryConcurrency: int(env, "FERRY_DELIVERY_CONCURRENCY", 512, 1, 100_000),
    destinationConcurrency: int(env, "FERRY_DESTINATION_CONCURRENCY", 64, 1, 100_000),
    headersTimeoutMs: int(env, "FERRY_HEADERS_TIMEOUT_MS", 10_000, 100, 600_000),
    requestTimeoutMs: int(env, "FERRY_REQUEST_TIMEOUT_MS", 120_000, 100, 3_600_000),
    maxConnections: int(env, "FERRY_MAX_CONNECTIONS", 10_000, 1, 1_000_000),
    pollIntervalMs: int(env, "FERRY_POLL_INTERVAL_MS", 1000, 10, 600_000),
    leaseMs: int(env, "FERRY_LEASE_MS", 15_000, 1000, 3_600_000),
    logRetentionMs: int(env, "FERRY_LOG_RETENTION_MS", 14 * DAY_MS, 60_000, 365 * DAY_MS),
    dedupWindowMs: int(env, "FERRY_DEDUP_WINDOW_MS", 10 * 60_000, 0, 365 * DAY_MS),
    destinationAllow: destinationAllow(env),
    schedulerIntervalMs: int(env, "FERRY_SCHEDULER_INTERVAL_MS", 1000, 100, 3_600_000),
    defaultPlan: oneOf(env, "FERRY_DEFAULT_PLAN", "paid", planNames),
    adminEmail: adminEmail(env),
    adminApiKey: adminApiKey(env),
    planOverrides: planOverrides(env),
    pricePer100k: decimal(env, "FERRY_PRICE_PER_100K", 1),
    region: oneOf(env, "FERRY_REGION", "eu-central-1", ["eu-central-1", "us-east-1"] as const),
    embeddingsUrl: embeddingsUrl(env),
    embeddingsModel: str(env, "FERRY_EMBEDDINGS_MODEL", "text-embedding-3-small"),
    embeddingsApiKey: optional(env, "FERRY_EMBEDDINGS_API_KEY"),
    metricsToken: optional(env, "FERRY_METRICS_TOKEN"),
  };
}

function embeddingsUrl(env: Env): string | undefined {
  const raw = optional(env, "FERRY_EMBEDDINGS_URL");
  if (raw !== undefined && !/^https?:\/\/[^\s]+$/.test(raw)) {
    throw new ConfigError(`config error: FERRY_EMBEDDINGS_URL must be an http(s) URL (got "${raw}")`);
  }
  return raw;
}

function destinationAllow(env: Env): string | undefined {
  const raw = optional(env, "FERRY_DESTINATION_ALLOW");
  try {
    parseEgressPolicy(raw);
  } catch (error) {
    if (error instanceof EgressConfigError) throw new ConfigError(error.message);
    throw error;
  }
  return raw;
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
  FERRY_STORE_THREAD: "off",
  FERRY_EGRESS_THREAD: "auto",
  FERRY_LOG_LEVEL: "info",
  FERRY_LOG_FILE: "(none: logs go to stdout)",
  FERRY_SHUTDOWN_GRACE_MS: "10000",
  FERRY_DELIVERY_CONCURRENCY: "512",
  FERRY_DESTINATION_CONCURRENCY: "64",
  FERRY_HEADERS_TIMEOUT_MS: "10000",
  FERRY_REQUEST_TIMEOUT_MS: "120000",
  FERRY_MAX_CONNECTIONS: "10000",
  FERRY_POLL_INTERVAL_MS: "1000",
  FERRY_LEASE_MS: "15000",
  FERRY_LOG_RETENTION_MS: "1209600000",
  FERRY_DEDUP_WINDOW_MS: "600000",
  FERRY_DEFAULT_PLAN: "paid",
  FERRY_DESTINATION_ALLOW: "(everything but the cloud-metadata ranges)",
  FERRY_SCHEDULER_INTERVAL_MS: "1000",
  FERRY_ADMIN_EMAIL: "admin@ferry.local",
  FERRY_ADMIN_API_KEY: "(generated on first start, stored hashed, printed once)",
  "FERRY_PLAN_<PLAN>_<FIELD>": "(the built-in plan table, docs/management.md)",
  FERRY_PRICE_PER_100K: "1",
  FERRY_REGION: "eu-central-1",
  FERRY_EMBEDDINGS_URL: "(none: the built-in lexical embedder)",
  FERRY_EMBEDDINGS_MODEL: "text-embedding-3-small",
  FERRY_EMBEDDINGS_API_KEY: "(none)",
  FERRY_METRICS_TOKEN: "(none: /metrics answers without a token)",
};
