import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import {
  CONFIG_OPTIONS,
  ConfigError,
  type ConfigOption,
  configDocsTable,
  egressThreadWanted,
  loadConfig,
  withConfigDocsTable,
} from "../../src/config.js";
import { UNLIMITED } from "../../src/domain/plans.js";
import { DEFAULT_ADMIN_EMAIL } from "../../src/services/accounts.js";

/**
 * Configuration is one table (src/config/options.ts, issue 30): these tests fail when a default, its docs and its
 * parser disagree, and they name every default once more by hand, so changing one is a visible decision.
 */
const options: readonly ConfigOption<string, unknown>[] = CONFIG_OPTIONS;
const docsPath = new URL("../../docs/configuration.md", import.meta.url);

describe("configuration as one table", () => {
  it("docs/configuration.md's table is the one the options make (npm run config:docs rewrites it)", () => {
    const doc = readFileSync(docsPath, "utf8");
    expect(doc).toContain(configDocsTable());
    expect(withConfigDocsTable(doc)).toBe(doc);
  });

  it("the README's short table quotes the same defaults", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const quoted = [...readme.matchAll(/^\| `([A-Z_0-9]+)` \| `([^`]*)` \|/gm)].map((m) => [m[1], m[2]]);
    expect(quoted.length).toBeGreaterThan(5);
    for (const [variable, fallback] of quoted) {
      expect(options.find((o) => o.variable === variable)?.default, variable).toBe(fallback);
    }
  });

  it("has one row per variable and per field", () => {
    expect(new Set(options.map((o) => o.variable)).size).toBe(options.length);
    expect(new Set(options.map((o) => o.key)).size).toBe(options.length);
    expect(Object.keys(loadConfig({})).sort()).toEqual(options.map((o) => o.key).sort());
  });

  it("applies these defaults when nothing is set (every one, written out)", () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: "0.0.0.0",
      databaseUrl: "sqlite:./data/ferry.db",
      token: undefined,
      currentSigningKey: undefined,
      nextSigningKey: undefined,
      dialect: "neutral",
      sqliteSynchronous: "FULL",
      databaseWaitMs: 30_000,
      pgPoolSize: 10,
      pgGatherMs: 5,
      pgRelay: true,
      pgRelayHost: undefined,
      storeThread: false,
      egressThread: egressThreadWanted("auto", availableParallelism()),
      logLevel: "info",
      logFile: undefined,
      shutdownGraceMs: 10_000,
      deliveryConcurrency: 512,
      destinationConcurrency: 64,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 120_000,
      maxConnections: 10_000,
      pollIntervalMs: 1000,
      leaseMs: 15_000,
      logRetentionMs: 14 * 86_400_000,
      dedupWindowMs: 10 * 60_000,
      defaultPlan: "paid",
      destinationAllow: undefined,
      schedulerIntervalMs: 1000,
      adminEmail: undefined,
      adminApiKey: undefined,
      planOverrides: {},
      pricePer100k: 1,
      region: "eu-central-1",
      embeddingsUrl: undefined,
      embeddingsModel: "text-embedding-3-small",
      embeddingsApiKey: undefined,
      metricsToken: undefined,
    });
  });

  it("every documented default is a value its parser accepts, and reads as if unset", () => {
    for (const o of options.filter((o) => o.default !== undefined)) {
      expect(o.read({ [o.variable]: o.default }), o.variable).toEqual(o.read({}));
    }
  });

  it("an option without a default says what unset means, and an empty variable counts as unset", () => {
    for (const o of options) {
      if (o.default === undefined) expect(o.unset, o.variable).toBeTruthy();
      expect(o.read({ [o.variable]: "  " }), o.variable).toEqual(o.read({}));
    }
    // The first customer's e-mail when none is stored is the services' constant; the docs name it.
    expect(options.find((o) => o.key === "adminEmail")?.unset).toContain(`\`${DEFAULT_ADMIN_EMAIL}\``);
  });

  /** A value each validating option refuses; the others take any text. */
  const BAD: Record<string, string> = {
    FERRY_PORT: "80a",
    DATABASE_URL: "mysql://x",
    FERRY_CURRENT_SIGNING_KEY: "short",
    FERRY_NEXT_SIGNING_KEY: "short",
    FERRY_DIALECT: "qstash",
    FERRY_SQLITE_SYNCHRONOUS: "OFF",
    FERRY_DATABASE_WAIT_MS: "-1",
    FERRY_PG_POOL_SIZE: "1",
    FERRY_PG_GATHER_MS: "-1",
    FERRY_PG_RELAY: "yes",
    FERRY_STORE_THREAD: "yes",
    FERRY_EGRESS_THREAD: "maybe",
    FERRY_LOG_LEVEL: "loud",
    FERRY_SHUTDOWN_GRACE_MS: "1.5",
    FERRY_DELIVERY_CONCURRENCY: "0",
    FERRY_DESTINATION_CONCURRENCY: "100001",
    FERRY_HEADERS_TIMEOUT_MS: "99",
    FERRY_REQUEST_TIMEOUT_MS: "ten",
    FERRY_MAX_CONNECTIONS: "0",
    FERRY_POLL_INTERVAL_MS: "9",
    FERRY_LEASE_MS: "999",
    FERRY_LOG_RETENTION_MS: "59999",
    FERRY_DEDUP_WINDOW_MS: "1e3",
    FERRY_DEFAULT_PLAN: "gold",
    FERRY_DESTINATION_ALLOW: "10.0.0.0/99",
    FERRY_SCHEDULER_INTERVAL_MS: "99",
    FERRY_ADMIN_EMAIL: "a:b@c",
    FERRY_ADMIN_API_KEY: "short",
    "FERRY_PLAN_<PLAN>_<FIELD>": "FERRY_PLAN_GOLD_MAX_QUEUES",
    FERRY_PRICE_PER_100K: "-1",
    FERRY_REGION: "mars",
    FERRY_EMBEDDINGS_URL: "ftp://x",
  };
  const FREE_TEXT = [
    "FERRY_HOST",
    "FERRY_PG_RELAY_HOST",
    "FERRY_TOKEN",
    "FERRY_LOG_FILE",
    "FERRY_EMBEDDINGS_MODEL",
    "FERRY_EMBEDDINGS_API_KEY",
    "FERRY_METRICS_TOKEN",
  ];

  it("refuses a bad value of every validating option at boot, naming the variable", () => {
    expect([...Object.keys(BAD), ...FREE_TEXT].sort()).toEqual(options.map((o) => o.variable).sort());
    for (const [variable, bad] of Object.entries(BAD)) {
      // The plan family is named by the variable itself; its value is fine.
      const env = variable.includes("<") ? { [bad]: "5" } : { [variable]: bad };
      const named = variable.includes("<") ? bad : variable;
      expect(() => loadConfig(env), variable).toThrow(ConfigError);
      expect(() => loadConfig(env), variable).toThrow(named);
    }
  });

  it("reads a good value of each kind", () => {
    const c = loadConfig({
      FERRY_PORT: "0",
      FERRY_DIALECT: "UPSTASH",
      FERRY_STORE_THREAD: "on",
      FERRY_EGRESS_THREAD: "off",
      FERRY_PRICE_PER_100K: "0.5",
      FERRY_PLAN_FREE_MAX_QUEUES: "unlimited",
      FERRY_TOKEN: " tok ",
    });
    expect(c).toMatchObject({ port: 0, dialect: "upstash", storeThread: true, egressThread: false, pricePer100k: 0.5 });
    expect(c.token).toBe("tok");
    expect(c.planOverrides.free?.max_queues).toBe(UNLIMITED);
  });
});
