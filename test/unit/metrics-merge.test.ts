import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Histogram, Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { commitBatchSize } from "../../src/metrics/metrics.js";
import { collectProcessMetrics } from "../../src/metrics/registry.js";
import { MetricsScraper } from "../../src/http/metrics-scrape.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { Store } from "../../src/store/store.js";
import { metricValue, parseMetrics } from "../helpers/metrics.js";

/**
 * One scrape sees every thread: a store running in a thread of its own answers `metricsOfStoreThread` with its
 * registry's JSON, and the scrape adds it to the main thread's. Here the "store thread" registry is a second real
 * prom-client registry holding the same metric, as the store thread's copy of src/metrics/metrics.ts would.
 */
const dir = mkdtempSync(join(tmpdir(), "ferry-metrics-merge-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("MetricsScraper", () => {
  it("merges the store thread's registry into the main thread's", async () => {
    collectProcessMetrics();
    const store = openSqliteStore({ path: join(dir, "ferry.db"), synchronous: "NORMAL" });
    const storeThread = new Registry();
    const theirs = new Histogram({
      name: "ferry_store_commit_batch_size",
      help: "same metric, other thread",
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2000],
      registers: [storeThread],
    });
    for (let i = 0; i < 7; i++) theirs.observe(3);
    const withThread: Store = { ...store, metricsOfStoreThread: () => storeThread.getMetricsAsJSON() };

    const alone = parseMetrics(await new MetricsScraper(store, () => Date.now()).render());
    commitBatchSize.observe(1);
    const merged = parseMetrics(await new MetricsScraper(withThread, () => Date.now()).render());
    const count = (s: typeof merged) => metricValue(s, "ferry_store_commit_batch_size_count");
    expect(count(merged) - count(alone)).toBe(8);
    // The process defaults appear once, not once per thread.
    expect(alone.filter((s) => s.name === "process_start_time_seconds")).toHaveLength(1);
    expect(merged.filter((s) => s.name === "process_start_time_seconds")).toHaveLength(
      alone.filter((s) => s.name === "process_start_time_seconds").length,
    );
    await store.close();
  });
});
