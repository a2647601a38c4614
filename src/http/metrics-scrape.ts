import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from "prom-client";
import type { StoreGauges } from "../store/ops-store.js";
import type { Store } from "../store/store.js";
import {
  deliveryLag,
  dlqSize,
  flowControlWaitLists,
  gaugeReadFailures,
  gaugesAge,
  messagesByState,
  queueLag,
  workflowRuns,
  workflowWaiters,
} from "../metrics/metrics.js";
import { threadRegistry } from "../metrics/registry.js";
import { timerDelay } from "../domain/timers.js";

/** A scrape waits this long for the database-derived gauges, then serves the cached values. */
const GAUGE_READ_TIMEOUT_MS = 1000;
/** Gauges read less than this long ago are served from the cache (several scrapers, one read). */
const GAUGE_CACHE_MS = 2000;

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/**
 * The scrape side of /metrics for one node (docs/metrics.md): refreshes the database-derived gauges (bounded
 * reads, a short timeout, a cached value), then merges this thread's registry with the store thread's, so one
 * scrape sees every thread of the process.
 */
export class MetricsScraper {
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  get contentType(): string {
    return threadRegistry.contentType;
  }

  async render(): Promise<string> {
    await this.refreshGauges();
    if (!this.store.metricsOfStoreThread) return threadRegistry.metrics();
    let theirs: MetricsJson;
    try {
      theirs = await this.store.metricsOfStoreThread();
    } catch {
      // The store thread's metrics are missing from this scrape only; the main thread's still answer.
      gaugeReadFailures.inc();
      return threadRegistry.metrics();
    }
    // Metrics only this thread has (the process defaults among them) pass through as they are: their aggregators
    // are meant for adding up cluster workers, and some ("omit": process_start_time_seconds) would drop them.
    const shared = new Set(theirs.map((m) => m.name));
    const mine = (await threadRegistry.getMetricsAsJSON()).map((m) =>
      shared.has(m.name) ? m : { ...m, aggregator: "first" as const },
    );
    return AggregatorRegistry.aggregate([mine, theirs]).metrics();
  }

  private async refreshGauges(): Promise<void> {
    if (this.now() - this.readAt >= GAUGE_CACHE_MS) {
      this.reading ??= this.readGauges().finally(() => {
        this.reading = undefined;
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timerDelay(GAUGE_READ_TIMEOUT_MS));
      });
      await Promise.race([this.reading, timeout]);
      clearTimeout(timer);
    }
    gaugesAge.set(Number.isFinite(this.readAt) ? Math.max(0, (this.now() - this.readAt) / 1000) : 0);
  }

  private async readGauges(): Promise<void> {
    try {
      const now = this.now();
      this.apply(await this.store.opsGauges({ now }), now);
      const runs = await this.store.workflowRunCounts({});
      for (const [state, n] of Object.entries(runs)) workflowRuns.set({ state }, n);
      workflowWaiters.set(await this.store.workflowWaiterCount());
      this.readAt = now;
    } catch {
      gaugeReadFailures.inc();
    }
  }

  private apply(g: StoreGauges, now: number): void {
    const m = g.messages;
    messagesByState.set({ state: "pending" }, m.pending);
    messagesByState.set({ state: "delayed" }, m.delayed);
    messagesByState.set({ state: "active" }, m.active);
    messagesByState.set({ state: "retrying" }, m.retrying);
    messagesByState.set({ state: "waiting_flow_control" }, m.waitingFlowControl);
    messagesByState.set({ state: "waiting_global" }, m.waitingGlobal);
    messagesByState.set({ state: "queued" }, m.queued);
    dlqSize.set(g.dlqSize);
    queueLag.set(g.queueLag);
    flowControlWaitLists.set(g.flowControlWaitLists);
    deliveryLag.set(g.oldestDueAt === undefined ? 0 : Math.max(0, (now - g.oldestDueAt) / 1000));
  }
}
