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

/** One key's current window: how many lines it logged in it, and how many it left out. */
interface KeyWindow {
  startedAt: number;
  logged: number;
  suppressed: number;
}

/**
 * `info` lines about failures (docs/operations.md, "Logs"), at most `perWindow` per key (a destination's host) per
 * `windowMs`, so one failing destination cannot flood the log: the lines past that are counted, and the key's next
 * logged line carries `suppressed` (how many were left out). Time is passed in. At most `maxKeys` keys are
 * remembered; beyond that the oldest are forgotten (their next line is logged as if new).
 */
export class RateLimitedLog {
  private readonly windows = new Map<string, KeyWindow>();

  constructor(
    private readonly log: Pick<Logger, "info">,
    private readonly opts: { perWindow: number; windowMs: number; maxKeys: number } = {
      perWindow: 5,
      windowMs: 60_000,
      maxKeys: 10_000,
    },
  ) {}

  info(key: string, now: number, fields: Record<string, unknown>, msg: string): void {
    let w = this.windows.get(key);
    if (w === undefined || now - w.startedAt >= this.opts.windowMs) {
      const suppressed = w?.suppressed ?? 0;
      w = { startedAt: now, logged: 0, suppressed: 0 };
      // Re-inserted, so the Map's order is the order of the windows' starts: the first key is the oldest.
      this.windows.delete(key);
      this.windows.set(key, w);
      if (this.windows.size > this.opts.maxKeys) this.windows.delete(this.windows.keys().next().value!);
      if (suppressed > 0) fields = { ...fields, suppressed };
    }
    if (w.logged >= this.opts.perWindow) {
      w.suppressed++;
      return;
    }
    w.logged++;
    this.log.info(fields, msg);
  }
}
