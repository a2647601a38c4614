import { isMainThread } from "node:worker_threads";
import { collectDefaultMetrics, Registry } from "prom-client";

/**
 * This thread's prom-client registry. Module-level on purpose: every thread (the main thread, the store thread)
 * loads its own copy of this module and so records into a registry of its own; /metrics merges them at scrape time
 * (scrape.ts, docs/metrics.md). Metrics are process-wide, not per Ferry instance: tests that start several servers
 * in one process read differences, not absolute values.
 */
export const threadRegistry = new Registry();

let processMetricsOn = false;

/**
 * prom-client's process defaults (CPU, memory, event-loop lag, handles), on the main thread only: the store
 * thread's copies would describe the same process twice, and aggregation would add them up.
 */
export function collectProcessMetrics(): void {
  if (!isMainThread || processMetricsOn) return;
  processMetricsOn = true;
  collectDefaultMetrics({ register: threadRegistry });
}
