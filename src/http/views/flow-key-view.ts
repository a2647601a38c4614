import type { FlowKeyMetrics } from "../../services/flow-keys.js";
import type { FlowKey, GlobalParallelism } from "../schemas/flow-control.js";

/**
 * One flow-control key (docs/flow-control.md): `ratePeriod` in seconds, `ratePeriodStart` in unix seconds. Unlike the
 * rest of the API, every field is always present, zeros and false included (docs/flow-control.md): clients read
 * `isPaused === false` or `typeof waitListSize === "number"` without defaults. An unset limit is 0, and so is the start
 * of a window that is not running.
 */
export function flowKeyRecord(m: FlowKeyMetrics): FlowKey {
  return {
    flowControlKey: m.key,
    waitListSize: m.waitListSize,
    parallelismMax: m.parallelismMax ?? 0,
    parallelismCount: m.parallelismCount,
    rateMax: m.rateMax ?? 0,
    rateCount: m.rateCount,
    ratePeriod: m.periodSec,
    ratePeriodStart: m.periodStart === undefined ? 0 : Math.floor(m.periodStart / 1000),
    isPaused: m.paused,
    isPinnedParallelism: m.pinnedParallelism,
    isPinnedRate: m.pinnedRate,
  };
}

/**
 * `GET /v2/globalParallelism`: Go `omitempty` style (docs/messaging.md "Wire conventions"), zero numbers are left
 * out, as the hosted service does.
 */
export function globalParallelismRecord(g: { parallelismMax: number; parallelismCount: number }): GlobalParallelism {
  const out: GlobalParallelism = {};
  if (g.parallelismMax !== 0) out.parallelismMax = g.parallelismMax;
  if (g.parallelismCount !== 0) out.parallelismCount = g.parallelismCount;
  return out;
}
