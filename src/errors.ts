/**
 * One error type for everything Ferry answers with a 4xx/5xx on purpose.
 * The wire body is always `{"error": message}` (docs/errors.md); the message names the offending field.
 * The catalog below is mirrored in docs/errors.md; a test keeps the two in sync.
 */
export const errorCatalog = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  read_only: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  quota_exceeded: 412,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  storage_full: 503,
} as const;

export type ErrorCode = keyof typeof errorCatalog;

export class AppError extends Error {
  readonly status: number;
  /** Extra response headers, e.g. the `RateLimit-*` family on a 429. */
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "AppError";
    this.status = errorCatalog[code];
    this.headers = headers;
  }
}

/**
 * 400 whose message starts with the field name, so every client sees which input was wrong. A name taken from the
 * request goes through `keyName` (src/http/query.ts) first, so an empty or blank one is still named.
 */
export function invalidField(field: string, problem: string): AppError {
  return new AppError("invalid_input", `invalid ${field}: ${problem}`);
}

/** Characters of an offending value an error message quotes (docs/reliability.md "Hostile bodies"). */
export const QUOTE_CHARS = 64;

/**
 * An offending value as an error message quotes it: a string by its first QUOTE_CHARS characters (with its length
 * when longer), a number, boolean or null as written, an array or object by its kind. Never the whole input, and no
 * recursion into it: a 5,000,000-character or 10,000-level value gives a short message.
 */
export function quoted(value: unknown): string {
  if (typeof value === "string") {
    if (value.length <= QUOTE_CHARS) return JSON.stringify(value);
    let end = QUOTE_CHARS;
    // Never cut a surrogate pair in half (the message would carry a lone surrogate).
    const code = value.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end -= 1;
    return `${JSON.stringify(value.slice(0, end))}… (${value.length} characters)`;
  }
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return typeof value === "undefined" ? "nothing" : `a ${typeof value}`;
}

export function notFound(what: string): AppError {
  return new AppError("not_found", `${what} not found`);
}

export function quotaExceeded(message: string): AppError {
  return new AppError("quota_exceeded", message);
}

/** Seconds a client is asked to wait before retrying a publish refused because storage is full. */
export const STORAGE_FULL_RETRY_AFTER_S = 30;

/**
 * A store error that means the disk (or the database's volume) is full: SQLite's SQLITE_FULL, an SQLite I/O error
 * caused by ENOSPC, a file-system ENOSPC, or PostgreSQL's SQLSTATE 53100 (disk_full). Decided from the error's own
 * `code`/`errno`/`message`, which survive the hop from the store thread (docs/operations.md, "Disk full").
 */
export function isStorageFull(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === "SQLITE_FULL" || code === "ENOSPC" || code === "53100") return true;
  const text = typeof message === "string" ? message : "";
  return typeof code === "string" && code.startsWith("SQLITE_IOERR") && /ENOSPC|disk is full|No space/i.test(text);
}

export function storageFull(): AppError {
  return new AppError("storage_full", "storage is full: nothing was stored, retry later", {
    "Retry-After": String(STORAGE_FULL_RETRY_AFTER_S),
  });
}

/**
 * Ends start-up with a message for the operator (an unreachable database, a SQLite file another process holds): the
 * process prints the message alone, without a stack, and exits non-zero. `name` survives the store thread's wire.
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}

/** A messaging token whose account is not active (auth, and a publish's token checked at commit). */
export function accountNotActive(state: string): AppError {
  return new AppError("forbidden", `account is not active (state: ${state})`);
}
