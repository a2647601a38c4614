import pino, { type Logger } from "pino";

/** Object-valued error fields worth keeping: they are errors themselves, serialized by pino. */
const NESTED_ERRORS = new Set(["cause", "aggregateErrors"]);

/**
 * pino's standard `err` serializer copies every enumerable property, and pg's errors carry the `client` they came
 * from, connection parameters (password included) and all. Keep what explains an error: its type, message, stack,
 * code and other plain fields, and nested errors.
 */
export function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const full = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(full).filter(([key, value]) => value === null || typeof value !== "object" || NESTED_ERRORS.has(key)),
  );
}

/** The service's logger: JSON lines on stdout, no Authorization header, errors without their connection objects. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, redact: ["req.headers.authorization"], serializers: { err: serializeError } };
  return destination ? pino(options, destination) : pino(options);
}
