import { invalidField, quoted } from "../errors.js";

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign, what Go prints
  μs: 1e-3, // U+03BC Greek mu, which people also type
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

// Longer units first so `ms` is not read as `m` followed by junk.
const GROUP = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/y;

/**
 * Sums Go-style `<number><unit>` groups; undefined when the text is not entirely such groups.
 * Shared with the back-off hint parser, which must never throw and does not accept days.
 */
export function tryParseDurationMs(text: string, allowDays = true): number | undefined {
  if (text === "") return undefined;
  GROUP.lastIndex = 0;
  let total = 0;
  while (GROUP.lastIndex < text.length) {
    const match = GROUP.exec(text);
    if (match === null) return undefined;
    const [, amount, unit] = match as unknown as [string, string, string];
    if (unit === "d" && !allowDays) return undefined;
    total += Number(amount) * (UNIT_MS[unit] ?? Number.NaN);
  }
  const ms = Math.round(total);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** Parses `Svc-Delay`, `Svc-Timeout`, flow-control periods and the like into milliseconds. */
export function parseDurationMs(input: string, field: string): number {
  const text = input.trim();
  // Clients (the Python SDK, hand-written curl) send plain integers meaning seconds.
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : tryParseDurationMs(text);
  if (ms === undefined || !Number.isSafeInteger(ms)) {
    throw invalidField(field, `${quoted(input)} is not a duration (e.g. 10s, 5m, 1h30m, 2d)`);
  }
  return ms;
}

/** The SDKs send and expect whole seconds with an `s` suffix. */
export function formatSeconds(ms: number): string {
  return `${Math.floor(ms / 1000)}s`;
}
