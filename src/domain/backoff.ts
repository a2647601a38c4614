import { tryParseDurationMs } from "./duration.js";

/** Destination hints above one day are ignored so a bogus header cannot park a message for ever. */
export const MAX_HINT_MS = 86_400_000;

const HINT_HEADERS = ["retry-after", "x-ratelimit-reset", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"];

/** `min(86400, e^(2.5·n))` seconds with n = retries already made + 1: about 12 s, 2m28s, 30m8s, 6h7m6s, then 24 h. */
export function defaultBackoffMs(retried: number): number {
  const n = Math.max(0, retried) + 1;
  return Math.round(Math.min(86_400, Math.exp(2.5 * n)) * 1000);
}

/**
 * The delay a failed response asks for, or undefined to fall back to the default backoff.
 * The first header that parses decides; if its value is over a day it is ignored (undefined), as documented.
 */
export function backoffHintMs(
  headers: Record<string, string | string[] | undefined>,
  nowMs: number,
): number | undefined {
  const lower = new Map<string, string | string[] | undefined>();
  for (const [name, value] of Object.entries(headers)) lower.set(name.toLowerCase(), value);

  for (const name of HINT_HEADERS) {
    const raw = lower.get(name);
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined) continue;
    const ms = parseHint(value.trim(), nowMs);
    if (ms === undefined) continue;
    return ms > MAX_HINT_MS ? undefined : ms;
  }
  return undefined;
}

function parseHint(text: string, nowMs: number): number | undefined {
  if (/^(\d+(\.\d*)?|\.\d+)$/.test(text)) {
    const ms = Math.round(Number(text) * 1000);
    return Number.isFinite(ms) ? ms : undefined;
  }
  const duration = tryParseDurationMs(text, false);
  if (duration !== undefined) return duration;
  // Date.parse is lenient (it reads "10" as a year), so only hand it things that look like an HTTP date.
  if (/[a-z]{3}/i.test(text) && /\d{1,2}:\d{2}:\d{2}/.test(text)) {
    const at = Date.parse(text);
    if (Number.isFinite(at)) return Math.max(0, at - nowMs);
  }
  return undefined;
}
