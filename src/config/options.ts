import { availableParallelism } from "node:os";
import type { DialectName } from "../domain/dialect.js";
import { type PlanOverrides, planNames } from "../domain/plans.js";
import {
  atLeast,
  databaseUrl,
  decimal,
  egressAllowList,
  egressThreadWanted,
  email,
  type Env,
  envValue,
  httpUrl,
  int,
  onOff,
  oneOf,
  type Parse,
  planOverrides,
  text,
} from "./parsers.js";

/**
 * Ferry's configuration as one table (issue 30, docs/configuration.md): one row per environment variable with its
 * default, its parser and its description. `Config` (src/config.ts), the defaults `loadConfig` applies, the boot
 * validation and the table of docs/configuration.md (`npm run config:docs`) are all derived from it, and
 * test/unit/config-table.test.ts fails when the docs, a default or a parser disagree.
 */
export interface ConfigOption<K extends string, T> {
  /** The `Config` field. */
  readonly key: K;
  /** The environment variable. */
  readonly variable: string;
  /** The raw value read when the variable is unset or empty; undefined: the field is undefined then. */
  readonly default: string | undefined;
  /** For an option without a default: what being unset means (the docs' Default column, in parentheses). */
  readonly unset?: string;
  /** The docs' Meaning column (Markdown). */
  readonly doc: string;
  /** Reads the field from the environment; a bad value throws a ConfigError naming the variable. */
  read(env: Env): T;
}

/** An option with a default: the field always has a value, the default's when the variable is unset. */
function option<K extends string, T>(o: {
  key: K;
  variable: string;
  default: string;
  parse: Parse<T>;
  doc: string;
}): ConfigOption<K, T> {
  return {
    key: o.key,
    variable: o.variable,
    default: o.default,
    doc: o.doc,
    read: (env) => o.parse(envValue(env, o.variable) ?? o.default, o.variable),
  };
}

/** An option without a default: the field is undefined when the variable is unset. */
function optional<K extends string, T>(o: {
  key: K;
  variable: string;
  unset: string;
  parse: Parse<T>;
  doc: string;
}): ConfigOption<K, T | undefined> {
  return {
    key: o.key,
    variable: o.variable,
    default: undefined,
    unset: o.unset,
    doc: o.doc,
    read: (env) => {
      const raw = envValue(env, o.variable);
      return raw === undefined ? undefined : o.parse(raw, o.variable);
    },
  };
}

const DAY_MS = 86_400_000;

export type AccountRegion = "eu-central-1" | "us-east-1";

/** In the order of docs/configuration.md's table. */
export const CONFIG_OPTIONS = [
  option({
    key: "port",
    variable: "FERRY_PORT",
    default: "8080",
    parse: int(0, 65_535),
    doc: "TCP port of both APIs. `0` picks a free port.",
  }),
  option({
    key: "host",
    variable: "FERRY_HOST",
    default: "0.0.0.0",
    parse: text,
    doc: "Interface to bind.",
  }),
  option({
    key: "databaseUrl",
    variable: "DATABASE_URL",
    default: "sqlite:./data/ferry.db",
    parse: databaseUrl,
    doc: "`sqlite:<path>` (embedded, one node) or `postgres://…` (several nodes).",
  }),
  optional({
    key: "token",
    variable: "FERRY_TOKEN",
    unset: "generated on first start, stored, printed once",
    parse: text,
    doc: "Token of the default messaging account. When set, it replaces the stored one.",
  }),
  optional({
    key: "currentSigningKey",
    variable: "FERRY_CURRENT_SIGNING_KEY",
    unset: "generated on first start, stored, printed once",
    parse: atLeast(16),
    doc: "Key that signs every delivery (`Svc-Signature`).",
  }),
  optional({
    key: "nextSigningKey",
    variable: "FERRY_NEXT_SIGNING_KEY",
    unset: "generated on first start, stored, printed once",
    parse: atLeast(16),
    doc: "The next key; `POST /v2/keys/rotate` promotes it.",
  }),
  option({
    key: "dialect",
    variable: "FERRY_DIALECT",
    default: "neutral",
    parse: oneOf<DialectName>(["neutral", "upstash"]),
    doc:
      "The names of what no request decided: `neutral` (`Svc-` headers, `svc_token`, `/v2/msgsvc`) or " +
      "`upstash` (the official SDKs' names). Both are understood either way; a request's own names pick its" +
      " dialect ([messaging.md](messaging.md) \"Dialects\").",
  }),
  option({
    key: "sqliteSynchronous",
    variable: "FERRY_SQLITE_SYNCHRONOUS",
    default: "FULL",
    parse: oneOf(["FULL", "NORMAL"]),
    doc:
      "`FULL`: no write is acknowledged before it is on disk; Ferry fsyncs the WAL off the event loop " +
      "(SQLite itself runs with `NORMAL`), and writes that commit together share one fsync. `NORMAL`: no " +
      "fsync; acknowledged writes survive a crash of the process but may be lost on power loss.",
  }),
  option({
    key: "databaseWaitMs",
    variable: "FERRY_DATABASE_WAIT_MS",
    default: "30000",
    parse: int(0, 3_600_000),
    doc:
      "PostgreSQL only: how long start-up waits for an unreachable database (wrong host or port, or one " +
      "still starting), retrying with backoff (0.1 s doubling to 2 s) and logging one short line per " +
      "attempt; then Ferry exits with status 1 and `database postgres://user@host:port/name not reachable " +
      "within … ms` (no password) on stderr. Meanwhile every request answers 503 `starting`. `0`: one " +
      "attempt.",
  }),
  option({
    key: "pgPoolSize",
    variable: "FERRY_PG_POOL_SIZE",
    default: "10",
    parse: int(2, 1000),
    doc:
      "PostgreSQL only: connections one node holds (up to 4 write transactions at once, reads, lease " +
      "renewals), plus one for LISTEN and one for the write relay's election. Size `max_connections` for all " +
      "nodes: see " +
      "[postgres.md](postgres.md).",
  }),
  option({
    key: "pgGatherMs",
    variable: "FERRY_PG_GATHER_MS",
    default: "5",
    parse: int(0, 100),
    doc:
      "PostgreSQL only: the most a busy node's next publish transaction waits to gather more publishes, and " +
      "never longer than its recent transactions took (a node whose transactions hold one publish never " +
      "waits). Fewer, larger commits: the database's work per message, which grows with the nodes, against " +
      "up to that much latency under load. `0`: never wait. See [postgres.md](postgres.md).",
  }),
  option({
    key: "pgRelay",
    variable: "FERRY_PG_RELAY",
    default: "on",
    parse: onOff,
    doc:
      "PostgreSQL only. `on` (default): the nodes of one database elect a leader, and the others hand it their " +
      "plain publishes and plain deliveries' outcomes over TCP, so its group commit holds them all and the " +
      "database's transactions do not multiply with the nodes; each node still delivers what it published. A " +
      "node that cannot reach the leader writes itself. The link is plain TCP (message bodies cross it): keep " +
      "the nodes on a private network, or set `off`: every node commits its own writes. See " +
      "[postgres.md](postgres.md), \"The write relay\".",
  }),
  optional({
    key: "pgRelayHost",
    variable: "FERRY_PG_RELAY_HOST",
    unset: "the address PostgreSQL sees the node connect from; loopback over a Unix socket",
    parse: text,
    doc:
      "PostgreSQL only: the address this node listens on for the other nodes when it leads the write relay, " +
      "and that they connect to (a port the system picks). Set it when PostgreSQL sees the node through a " +
      "proxy. Only nodes that can read the database's `relay_leader` row know the secret the leader asks for.",
  }),
  option({
    key: "storeThread",
    variable: "FERRY_STORE_THREAD",
    default: "off",
    parse: onOff,
    doc:
      "`on`: the storage adapter (SQLite or PostgreSQL) runs in its own worker thread, so storage and HTTP " +
      "can use two cores ([threading.md](threading.md)). `off` (default): everything on the main thread; on" +
      " a 2-core machine shared with its clients it measured 1.15× faster (threading.md, \"Measured\").",
  }),
  option({
    key: "egressThread",
    variable: "FERRY_EGRESS_THREAD",
    default: "auto",
    parse: (raw, variable) => egressThreadWanted(oneOf(["auto", "on", "off"])(raw, variable), availableParallelism()),
    doc:
      "`auto` (default): `on` when this process may run on more than one CPU (`os.availableParallelism()`)," +
      " else `off`. `on`: deliveries and callbacks are signed and sent from their own worker thread, the " +
      "egress thread, so HTTP out and the rest of Ferry use two cores; on a 2-core machine shared with its " +
      "clients it measured 1.02–1.21× faster end to end. `off`: they are sent from the main thread, which " +
      "on one CPU is faster (1.15–1.18× with Ferry pinned to one core) ([threading.md](threading.md), \"The " +
      "egress thread\").",
  }),
  option({
    key: "logLevel",
    variable: "FERRY_LOG_LEVEL",
    default: "info",
    parse: oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    doc:
      "pino level: fatal, error, warn, info, debug, trace, silent. `info` has one line per failed attempt, " +
      "DLQ move, failed callback and schedule that could not publish (rate-limited per destination); " +
      "`debug` adds one line per request (docs/operations.md, \"Logs\"). Logs never carry tokens or message " +
      "bodies.",
  }),
  optional({
    key: "logFile",
    variable: "FERRY_LOG_FILE",
    unset: "none: logs go to stdout",
    parse: text,
    doc:
      "Append the JSON log lines to this file instead of stdout; SIGHUP reopens it, so logrotate can move " +
      "it away (docs/operations.md).",
  }),
  option({
    key: "shutdownGraceMs",
    variable: "FERRY_SHUTDOWN_GRACE_MS",
    default: "10000",
    parse: int(0, 3_600_000),
    doc:
      "On SIGTERM/SIGINT: how long in-flight deliveries may finish; what is still in flight then is " +
      "abandoned (logged, delivered again after the restart) and the process exits (docs/operations.md, " +
      "\"Stop\").",
  }),
  option({
    key: "deliveryConcurrency",
    variable: "FERRY_DELIVERY_CONCURRENCY",
    default: "512",
    parse: int(1, 100_000),
    doc: "Delivery attempts one node runs at once.",
  }),
  option({
    key: "destinationConcurrency",
    variable: "FERRY_DESTINATION_CONCURRENCY",
    default: "64",
    parse: int(1, 100_000),
    doc:
      "Attempts one node runs at once to one destination (scheme, host and port); more wait their turn " +
      "without taking the node's slots, and a claim takes no more for a destination than twice this (its " +
      "share of the node), walking past the rest of its due messages to other destinations', so a hanging " +
      "destination, whatever its backlog, cannot block the others (docs/reliability.md, \"Isolation\").",
  }),
  option({
    key: "headersTimeoutMs",
    variable: "FERRY_HEADERS_TIMEOUT_MS",
    default: "10000",
    parse: int(100, 600_000),
    doc:
      "A client must send its request line and headers within this time, or gets a 408 (slowloris; " +
      "docs/reliability.md, \"Ingress limits\").",
  }),
  option({
    key: "requestTimeoutMs",
    variable: "FERRY_REQUEST_TIMEOUT_MS",
    default: "120000",
    parse: int(100, 3_600_000),
    doc: "A client must send its whole request, body included, within this time, or gets a 408.",
  }),
  option({
    key: "maxConnections",
    variable: "FERRY_MAX_CONNECTIONS",
    default: "10000",
    parse: int(1, 1_000_000),
    doc: "Client connections at once; one more is answered 503 with `Retry-After: 1` and closed.",
  }),
  option({
    key: "pollIntervalMs",
    variable: "FERRY_POLL_INTERVAL_MS",
    default: "1000",
    parse: int(10, 600_000),
    doc: "How often a node looks for due messages written by other nodes.",
  }),
  option({
    key: "leaseMs",
    variable: "FERRY_LEASE_MS",
    default: "15000",
    parse: int(1000, 3_600_000),
    doc:
      "Lease length; a node renews its leases every third of it, and a dead node's messages are taken over " +
      "after it.",
  }),
  option({
    key: "logRetentionMs",
    variable: "FERRY_LOG_RETENTION_MS",
    default: "1209600000",
    parse: int(60_000, 365 * DAY_MS),
    doc: "Message logs older than this (14 days) are deleted.",
  }),
  option({
    key: "dedupWindowMs",
    variable: "FERRY_DEDUP_WINDOW_MS",
    default: "600000",
    parse: int(0, 365 * DAY_MS),
    doc: "Window of `Svc-Deduplication-Id` and content-based deduplication (10 minutes).",
  }),
  option({
    key: "defaultPlan",
    variable: "FERRY_DEFAULT_PLAN",
    default: "paid",
    parse: oneOf(planNames),
    doc:
      "Plan of the default account: `free`, `paid`, `msgsvc_fixed_1m`, `msgsvc_fixed_10m`, " +
      "`msgsvc_fixed_100m`, `msgsvc_fixed`.",
  }),
  optional({
    key: "destinationAllow",
    variable: "FERRY_DESTINATION_ALLOW",
    unset: "everything but the cloud-metadata ranges",
    parse: egressAllowList,
    doc:
      "Where deliveries, callbacks and failure callbacks may connect: comma-separated CIDRs (`127.0.0.0/8`," +
      " `::1/128`), host names and `*.suffix` names. A destination or callback whose host is a literal " +
      "address the list refuses is a 400 naming it at publish; a host name is checked at connect time, on " +
      "the addresses it resolves to, and a refused one fails like a connection error (retries, DLQ, failure" +
      " callback). The cloud-metadata addresses (169.254.0.0/16, fe80::/10, 100.100.100.200, 168.63.129.16," +
      " 192.0.0.192, fd00:ec2::/32, fd20:ce::254, fd00:c1::a9fe:a9fe, and each of them embedded in IPv6: " +
      "docs/reliability.md \"Egress policy\") need an explicit entry inside them. With only loopback entries " +
      "no DNS lookup is ever made.",
  }),
  option({
    key: "schedulerIntervalMs",
    variable: "FERRY_SCHEDULER_INTERVAL_MS",
    default: "1000",
    parse: int(100, 3_600_000),
    doc: "How often the scheduler looks for due cron ticks; a tick fires at most this late.",
  }),
  optional({
    key: "adminEmail",
    variable: "FERRY_ADMIN_EMAIL",
    unset: "the first customer's; `admin@ferry.local` for a new one",
    parse: email,
    doc: "E-mail of the first customer (the management API's Basic-auth user). When set, it replaces the first customer's.",
  }),
  optional({
    key: "adminApiKey",
    variable: "FERRY_ADMIN_API_KEY",
    unset: "generated on first start, stored hashed, printed once",
    parse: atLeast(16),
    doc: "API key of the first customer; at least 16 characters. Stored as a salted scrypt hash.",
  }),
  {
    key: "planOverrides",
    variable: "FERRY_PLAN_<PLAN>_<FIELD>",
    default: undefined,
    unset: "the built-in plan table, docs/management.md",
    doc:
      "Overrides one limit of one plan, e.g. `FERRY_PLAN_FREE_MAX_REQUESTS_PER_DAY=unlimited` or " +
      "`FERRY_PLAN_PAID_MAX_QUEUES=500`. Value: an integer or `unlimited`.",
    // A family of variables read by prefix, not one variable.
    read: (env) => planOverrides(env, "FERRY_PLAN_"),
  } satisfies ConfigOption<"planOverrides", PlanOverrides>,
  option({
    key: "pricePer100k",
    variable: "FERRY_PRICE_PER_100K",
    default: "1",
    parse: decimal,
    doc:
      "Price in dollars per 100,000 messages for the usage statistics' billing figures; the free plan is " +
      "never billed.",
  }),
  option({
    key: "region",
    variable: "FERRY_REGION",
    default: "eu-central-1",
    parse: oneOf<AccountRegion>(["eu-central-1", "us-east-1"]),
    doc: "`region` of the messaging accounts this server creates (`eu-central-1` or `us-east-1`).",
  }),
  optional({
    key: "embeddingsUrl",
    variable: "FERRY_EMBEDDINGS_URL",
    unset: "none: the built-in lexical embedder",
    parse: httpUrl,
    doc:
      "Search indexes: an OpenAI-compatible embeddings endpoint (the full URL, e.g. " +
      "`http://127.0.0.1:11434/v1/embeddings`). Texts are sent in batches of 64 with retries; when it is " +
      "down, upserts and searches answer 503. See [search.md](search.md).",
  }),
  option({
    key: "embeddingsModel",
    variable: "FERRY_EMBEDDINGS_MODEL",
    default: "text-embedding-3-small",
    parse: text,
    doc: "Search indexes: the `model` sent to `FERRY_EMBEDDINGS_URL`.",
  }),
  optional({
    key: "embeddingsApiKey",
    variable: "FERRY_EMBEDDINGS_API_KEY",
    unset: "none",
    parse: text,
    doc: "Search indexes: sent as `Authorization: Bearer <key>` to `FERRY_EMBEDDINGS_URL`.",
  }),
  optional({
    key: "metricsToken",
    variable: "FERRY_METRICS_TOKEN",
    unset: "none: /metrics answers without a token",
    parse: text,
    doc:
      "When set, `GET /metrics` requires `Authorization: Bearer <token>` and answers 401 otherwise " +
      "(docs/metrics.md).",
  }),
] as const;
