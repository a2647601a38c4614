/**
 * One error type for everything Ferry answers with a 4xx/5xx on purpose.
 * The wire body is always `{"error": message}` (reference: decisions §2); the message names the offending field.
 * The catalog below is mirrored in docs/errors.md; a test keeps the two in sync.
 */
export const errorCatalog = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  read_only: 403,
  not_found: 404,
  method_not_allowed: 405,
  quota_exceeded: 412,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
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

/** 400 whose message starts with the field name, so every client sees which input was wrong. */
export function invalidField(field: string, problem: string): AppError {
  return new AppError("invalid_input", `invalid ${field}: ${problem}`);
}

export function notFound(what: string): AppError {
  return new AppError("not_found", `${what} not found`);
}

export function quotaExceeded(message: string): AppError {
  return new AppError("quota_exceeded", message);
}
