import pg from "pg";

/** OIDs whose text form we parse ourselves: int8 (BIGINT ms timestamps, counts). */
const INT8_OID = 20;

/**
 * pg returns BIGINT as strings (it may exceed 2^53). Ferry's BIGINTs are unix ms and counters, far below that, so
 * they are parsed to numbers: rows then look the same as the SQLite adapter's. Set per pool, not globally.
 */
export const pgTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === INT8_OID && format !== "binary") return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig["getTypeParser"],
};

export interface PgConnectionOptions {
  connectionString: string;
  /** Connections this node may hold. (Default: 10) */
  poolSize: number;
}

/** Client settings shared by the pool and the LISTEN connection. */
export function clientConfig(o: PgConnectionOptions): pg.ClientConfig {
  return {
    connectionString: o.connectionString,
    types: pgTypes,
    // An unreachable host must fail a request within seconds, not hang it until the OS gives up.
    connectionTimeoutMillis: 5000,
    // Detects a half-open connection (database host gone without a FIN) instead of waiting forever.
    keepAlive: true,
    application_name: "ferry",
  };
}

export function createPool(o: PgConnectionOptions): pg.Pool {
  // Pipeline mode: statements issued without awaiting the previous one go out at once (write-batcher.ts sends a
  // batch's flush and its COMMIT together). Statements awaited one by one behave exactly as without it.
  return new pg.Pool({ ...clientConfig(o), max: o.poolSize, idleTimeoutMillis: 30_000, pipeline: true });
}

/** Node socket errors that mean "the database is not reachable right now". */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNABORTED",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * SQLSTATEs of a database that is away or refusing for a moment: class 08 (connection exception), 57P01
 * admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, in recovery), 53300
 * too_many_connections.
 */
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300"]);

/** Messages pg uses for a socket that died under it (these errors carry no code). */
const CONNECTION_MESSAGES = [
  "Connection terminated",
  "connection timeout",
  "timeout exceeded when trying to connect",
  "is not queryable",
  "Client has encountered a connection error",
];

/** True when `error` means the database is unreachable (as opposed to a bad statement or a constraint). */
export function isUnavailableError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith("08")) return true;
  }
  // AggregateError (several addresses refused) carries its causes in `errors`.
  const inner = (error as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner.some(isUnavailableError)) return true;
  return CONNECTION_MESSAGES.some((m) => error.message.includes(m));
}

/** The database as an operator recognises it, without its password: `postgres://user@host:port/name`. */
export function databaseLabel(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    url.password = "";
    url.search = "";
    return url.toString();
  } catch {
    return "(DATABASE_URL, not a valid URL)";
  }
}

/** One short line for an unreachable database: the message, or the codes of the addresses that refused. */
export function unavailableReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const inner = (error as { errors?: unknown }).errors;
  if (error.message !== "") return error.message.split("\n")[0]!;
  if (Array.isArray(inner)) return inner.map(unavailableReason).join("; ");
  return String((error as { code?: unknown }).code ?? error.name);
}

/** Deadlock and serialization failures: the transaction did nothing and may simply run again. */
/** A premise checked server-side did not hold (`ferry_expect`, migration 069): the batch runs again not pipelined. */
export function isExpectFailure(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === "FE001";
}

export function isRetryableConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === "40P01" || code === "40001";
}

/**
 * Marks a connection error, or a deadlock that was still there after the retries, so the HTTP layer answers 503
 * `storage unavailable, retry shortly` (src/http/plugins/errors.ts maps `unavailable: true`): in both cases nothing
 * was written and the same request can simply be sent again. Other errors pass through untouched.
 */
export function classifyError(error: unknown): unknown {
  if (isUnavailableError(error) || isRetryableConflict(error)) (error as { unavailable?: boolean }).unavailable = true;
  return error;
}
