import { invalidField, quoted } from "../errors.js";
import { parseDurationMs } from "./duration.js";

export interface FlowControlSpec {
  parallelism?: number;
  rate?: number;
  periodSec: number;
}

/** The documented cap of a rate period: one week. */
export const MAX_PERIOD_SEC = 604_800;

/** Parses `Svc-Flow-Control-Value`, e.g. `parallelism=5, rate=10, period=1m`. */
export function parseFlowControlValue(value: string, field: string): FlowControlSpec {
  const seen = new Set<string>();
  const spec: FlowControlSpec = { periodSec: 1 };

  for (const part of value.split(",")) {
    const entry = part.trim();
    if (entry === "") continue;
    const eq = entry.indexOf("=");
    if (eq < 0) throw invalidField(field, `${quoted(entry)} is not a key=value pair`);
    const key = entry.slice(0, eq).trim().toLowerCase();
    const raw = entry.slice(eq + 1).trim();
    if (seen.has(key)) throw invalidField(field, `duplicate key ${quoted(key)}`);
    seen.add(key);

    if (key === "parallelism" || key === "rate") {
      spec[key] = positiveInt(raw, key, field);
    } else if (key === "period") {
      const seconds = Math.floor(parseDurationMs(raw, field) / 1000);
      if (seconds < 1 || seconds > MAX_PERIOD_SEC) {
        throw invalidField(field, `period must be between 1s and 1 week, got ${quoted(raw)}`);
      }
      spec.periodSec = seconds;
    } else {
      throw invalidField(field, `unknown key ${quoted(key)} (expected parallelism, rate or period)`);
    }
  }

  if (spec.parallelism === undefined && spec.rate === undefined) {
    throw invalidField(field, "at least one of parallelism and rate is required");
  }
  return spec;
}

function positiveInt(raw: string, key: string, field: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1) {
    throw invalidField(field, `${key} must be an integer >= 1, got ${quoted(raw)}`);
  }
  return n;
}
