import { Cron } from "croner";

/**
 * The next run times of a schedule's cron, as Ferry computes them (src/domain/cron.ts): five fields in UTC, or a
 * `CRON_TZ=<zone> ` prefix, croner's nicknames such as `@daily`. Returns the error text when the expression is not
 * valid, so the form can show it while the user types.
 */
export type CronPreview = { ok: true; runs: Date[] } | { ok: false; error: string };

const TZ_PREFIX = /^(?:CRON_TZ|TZ)=(\S+)\s+(.+)$/s;
const NICKNAMES = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"]);

export function cronPreview(raw: string, count = 5, from: Date = new Date()): CronPreview {
  const text = raw.trim();
  if (text === "") return { ok: false, error: "Enter 5 fields, e.g. */5 * * * *" };
  const prefixed = TZ_PREFIX.exec(text);
  const timezone = prefixed ? prefixed[1]! : "UTC";
  const pattern = (prefixed ? prefixed[2]! : text).trim();
  if (!NICKNAMES.has(pattern.toLowerCase()) && pattern.split(/\s+/).length !== 5) {
    return { ok: false, error: "A cron expression has 5 fields: minute hour day-of-month month day-of-week" };
  }
  try {
    const cron = new Cron(pattern, { timezone, mode: "5-part", paused: true });
    const runs = cron.nextRuns(count, from);
    if (runs.length === 0) return { ok: false, error: "This expression never runs" };
    return { ok: true, runs };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message.replace(/^CronPattern: /, "") : String(error) };
  }
}
