import type { FlowKeyMetrics } from "../../services/flow-control.js";

type Json = Record<string, unknown>;

/** Go `omitempty` style (reference §0): zero numbers and false booleans are left out; clients default them. */
function putNonZero(out: Json, key: string, value: number | boolean | undefined): void {
  if (value === undefined || value === 0 || value === false) return;
  out[key] = value;
}

/** One flow-control key (reference §1.11): `ratePeriod` in seconds, `ratePeriodStart` in unix seconds. */
export function flowKeyRecord(m: FlowKeyMetrics): Json {
  const out: Json = { flowControlKey: m.key };
  putNonZero(out, "waitListSize", m.waitListSize);
  putNonZero(out, "parallelismMax", m.parallelismMax);
  putNonZero(out, "parallelismCount", m.parallelismCount);
  putNonZero(out, "rateMax", m.rateMax);
  putNonZero(out, "rateCount", m.rateCount);
  putNonZero(out, "ratePeriod", m.periodSec);
  putNonZero(out, "ratePeriodStart", m.periodStart === undefined ? undefined : Math.floor(m.periodStart / 1000));
  putNonZero(out, "isPaused", m.paused);
  putNonZero(out, "isPinnedParallelism", m.pinnedParallelism);
  putNonZero(out, "isPinnedRate", m.pinnedRate);
  return out;
}

/** `GET /v2/globalParallelism`; `parallelismCount` is omitted when 0, as the hosted service does. */
export function globalParallelismRecord(g: { parallelismMax: number; parallelismCount: number }): Json {
  const out: Json = {};
  putNonZero(out, "parallelismMax", g.parallelismMax);
  putNonZero(out, "parallelismCount", g.parallelismCount);
  return out;
}
