/**
 * A schedule's cron in plain words ("every 5 minutes", "at 09:00 on Monday (UTC)"), for the Schedules table and
 * form. Covers the forms people write: steps, lists and ranges of numbers or names, and croner's nicknames, with the
 * zone of a `CRON_TZ=` prefix (UTC without one: docs/schedules.md). Anything else (`L`, `#`, `?`, steps over a range)
 * gives undefined, and the console shows the expression alone.
 */
const TZ_PREFIX = /^(?:CRON_TZ|TZ)=(\S+)\s+(.+)$/s;

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const DAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
const MONTH_NAMES = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];

const NICKNAMES: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

/** A field: any value, every n-th from the first, or some values (ascending), each a single value or a range. */
type Field = { kind: "any" } | { kind: "step"; n: number } | { kind: "list"; parts: [number, number][] };

function parseField(text: string, names: string[] = [], offset = 0): Field | undefined {
  if (text === "*") return { kind: "any" };
  const step = /^\*\/(\d+)$/.exec(text);
  if (step) return Number(step[1]) === 1 ? { kind: "any" } : { kind: "step", n: Number(step[1]) };
  const value = (v: string): number | undefined => {
    if (/^\d+$/.test(v)) return Number(v);
    const i = names.indexOf(v.toUpperCase());
    return i < 0 ? undefined : i + offset;
  };
  const parts: [number, number][] = [];
  for (const piece of text.split(",")) {
    const [a, b, extra] = piece.split("-");
    const from = value(a ?? "");
    const to = b === undefined ? from : value(b);
    if (extra !== undefined || from === undefined || to === undefined || to < from) return undefined;
    parts.push([from, to]);
  }
  return { kind: "list", parts };
}

const pad = (n: number) => String(n).padStart(2, "0");

/** "a", "a and b", "a, b and c". */
function joined(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/** The values of a list field as words: `Monday to Friday`, `Monday and Friday`. */
function listWords(parts: [number, number][], word: (n: number) => string): string {
  return joined(parts.map(([a, b]) => (a === b ? word(a) : `${word(a)} to ${word(b)}`)));
}

/** Single values only (no ranges), or undefined. */
const singles = (f: Field): number[] | undefined =>
  f.kind === "list" && f.parts.every(([a, b]) => a === b) ? f.parts.map(([a]) => a) : undefined;

/** The time of day part; `fixed` tells whether it names times of day (so the zone matters and "every day" reads). */
function timeWords(minute: Field, hour: Field): { text: string; fixed: boolean } | undefined {
  const minutes = singles(minute);
  const hours = singles(hour);
  if (minute.kind === "any") return hour.kind === "any" ? { text: "every minute", fixed: false } : undefined;
  if (minute.kind === "step") {
    const every = `every ${minute.n} minutes`;
    if (hour.kind === "any") return { text: every, fixed: false };
    if (hours && hours.length === 1) return { text: `${every} from ${pad(hours[0]!)}:00 to ${pad(hours[0]!)}:59`, fixed: true };
    return undefined;
  }
  if (!minutes) return undefined;
  const past = joined(minutes.map((m) => `:${pad(m)}`));
  if (hour.kind === "any") return { text: minutes.length === 1 && minutes[0] === 0 ? "every hour" : `every hour at ${past}`, fixed: false };
  if (hour.kind === "step") {
    const every = `every ${hour.n} hours`;
    return { text: minutes.length === 1 && minutes[0] === 0 ? every : `${every} at ${past}`, fixed: false };
  }
  if (hours && hours.length * minutes.length <= 6) {
    const times = hours.flatMap((h) => minutes.map((m) => `${pad(h)}:${pad(m)}`));
    return { text: `at ${joined(times)}`, fixed: true };
  }
  const range = hour.parts.length === 1 ? hour.parts[0]! : undefined;
  if (range && minutes.length === 1) {
    const [a, b] = range;
    return { text: `every hour at ${past} from ${pad(a)}:${pad(minutes[0]!)} to ${pad(b)}:${pad(minutes[0]!)}`, fixed: true };
  }
  return undefined;
}

/** The days part (empty when every day), or undefined. Day-of-month and day-of-week both set: either matches. */
function dayWords(dom: Field, month: Field, dow: Field): string | undefined {
  if (dom.kind === "step" || month.kind === "step" || dow.kind === "step") return undefined;
  const dayOfWeek = dow.kind === "list" ? listWords(dow.parts, (d) => DAYS[d % 7]!) : undefined;
  const monthName = (m: number) => MONTHS[m - 1];
  if (month.kind === "list" && month.parts.some(([a, b]) => a < 1 || b > 12)) return undefined;
  if (dow.kind === "list" && dow.parts.some(([, b]) => b > 7)) return undefined;
  const months = month.kind === "list" ? listWords(month.parts, (m) => monthName(m)!) : undefined;
  let days: string | undefined;
  if (dom.kind === "list") {
    const domSingles = singles(dom);
    const inMonth = months && domSingles?.length === 1 && month.kind === "list" && singles(month)?.length === 1;
    if (inMonth) days = `on ${domSingles[0]} ${months}`;
    else {
      const label = dom.parts.length === 1 && dom.parts[0]![0] === dom.parts[0]![1] ? "day" : "days";
      days = `on ${label} ${listWords(dom.parts, String)} of the month`;
      if (months) days += ` in ${months}`;
    }
    if (dayOfWeek) days += ` or on ${dayOfWeek}`;
    return days;
  }
  if (dayOfWeek) return `on ${dayOfWeek}${months ? ` in ${months}` : ""}`;
  return months ? `every day in ${months}` : "";
}

export function cronWords(raw: string): string | undefined {
  const text = raw.trim();
  const prefixed = TZ_PREFIX.exec(text);
  const zone = prefixed ? prefixed[1]! : "UTC";
  let pattern = (prefixed ? prefixed[2]! : text).trim();
  pattern = NICKNAMES[pattern.toLowerCase()] ?? pattern;
  const fields = pattern.split(/\s+/);
  if (fields.length !== 5) return undefined;
  const [minute, hour, dom, month, dow] = [
    parseField(fields[0]!),
    parseField(fields[1]!),
    parseField(fields[2]!),
    parseField(fields[3]!, MONTH_NAMES, 1),
    parseField(fields[4]!, DAY_NAMES),
  ];
  if (!minute || !hour || !dom || !month || !dow) return undefined;
  const time = timeWords(minute, hour);
  const days = dayWords(dom, month, dow);
  if (!time || days === undefined) return undefined;
  if (days === "") return time.fixed ? `${time.text} every day (${zone})` : time.text;
  return `${time.text} ${days} (${zone})`;
}
