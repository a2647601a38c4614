import { Cron } from "croner";
import { invalidField, quoted } from "../errors.js";

/**
 * Cron expressions of schedules (docs/schedules.md): 5 standard fields evaluated in UTC, an optional
 * `CRON_TZ=<IANA zone> ` prefix, minute resolution, surrounding whitespace trimmed. Parsing and next-run computation
 * are croner's; this module only adds the prefix, the field count and Ferry's error messages.
 */
export interface CronExpression {
  /** The expression as stored and shown (trimmed), prefix included: `CRON_TZ=Europe/Berlin 0 9 * * 1-5`. */
  text: string;
  /** The five fields (or a croner nickname such as `@daily`). */
  pattern: string;
  /** IANA zone of the `CRON_TZ=` prefix; UTC when absent. */
  timezone: string;
}

/** `CRON_TZ=` is the documented prefix; `TZ=` is the alias the Go cron library accepts too. */
const TZ_PREFIX = /^(?:CRON_TZ|TZ)=(\S+)\s+(.+)$/s;
/** croner's nicknames, equivalent to a 5-field expression each. */
const NICKNAMES = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"]);

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function compile(pattern: string, timezone: string): Cron {
  // `paused` and no callback: croner computes run times only and never arms a timer of its own.
  return new Cron(pattern, { timezone, mode: "5-part", paused: true });
}

/** Validates an expression; every problem is a 400 naming `field` (e.g. `Svc-Cron`). */
export function parseCron(raw: string, field: string): CronExpression {
  const text = raw.trim();
  if (text === "") throw invalidField(field, "is required (5 fields, e.g. */5 * * * *)");
  let timezone = "UTC";
  let pattern = text;
  const prefixed = TZ_PREFIX.exec(text);
  if (/^(?:CRON_TZ|TZ)=/.test(text)) {
    if (!prefixed) throw invalidField(field, `${quoted(text)} has a CRON_TZ= prefix but no expression after it`);
    timezone = prefixed[1]!;
    pattern = prefixed[2]!.trim();
    if (!isTimeZone(timezone)) throw invalidField(field, `${quoted(timezone)} is not a known IANA time zone`);
  }
  const fields = pattern.split(/\s+/);
  if (!(fields.length === 1 && NICKNAMES.has(pattern.toLowerCase())) && fields.length !== 5) {
    throw invalidField(field, `${quoted(pattern)} must have 5 fields (minute hour day-of-month month day-of-week)`);
  }
  let cron: Cron;
  try {
    cron = compile(pattern, timezone);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern: /, "") : String(error);
    throw invalidField(field, `${quoted(pattern)} is not a valid cron expression (${reason})`);
  }
  if (cron.nextRun() === null) throw invalidField(field, `${quoted(pattern)} never fires`);
  return { text, pattern, timezone };
}

/** Re-reads a stored expression (already validated when it was stored). */
export function cronFromText(text: string): CronExpression {
  return parseCron(text, "cron");
}

/** Compiled expressions by text: the scheduler loop asks for the same few expressions every second. */
const compiled = new Map<string, Cron>();
const COMPILED_CACHE_SIZE = 1000;

function compiledFor(cron: CronExpression): Cron {
  const key = `${cron.timezone} ${cron.pattern}`;
  let c = compiled.get(key);
  if (!c) {
    if (compiled.size >= COMPILED_CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
    c = compile(cron.pattern, cron.timezone);
    compiled.set(key, c);
  }
  return c;
}

/**
 * The first tick strictly after `afterMs` (unix ms), or undefined when the expression never fires again.
 * Daylight-saving changes follow croner: a fixed time that a spring-forward skips (02:30 in New York) fires at the
 * first valid time after the gap (03:00 EDT); a fixed time repeated by a fall-back fires once.
 */
export function nextTickAfter(cron: CronExpression, afterMs: number): number | undefined {
  const next = compiledFor(cron).nextRun(new Date(afterMs));
  return next === null ? undefined : next.getTime();
}
