import type { MetricObjectWithValues, MetricValue } from "prom-client";

/**
 * Counts that saturate here: the gauges below read at most this many rows each, through partial indexes, so a
 * scrape stays cheap however large a backlog grows (docs/metrics.md says a gauge at this value means "at least").
 */
export const GAUGE_COUNT_CAP = 100_000;

/** Database-derived gauges for /metrics, read at scrape time (docs/metrics.md). Plain data: it crosses threads. */
export interface StoreGauges {
  /** Live messages by row state, each count capped at GAUGE_COUNT_CAP. */
  messages: {
    /** CREATED or RETRY and due now: waiting for a free delivery slot. */
    pending: number;
    /** CREATED with a due time in the future (delay, not-before, callbacks not yet due). */
    delayed: number;
    /** ACTIVE: an attempt is running (leased). */
    active: number;
    /** RETRY with its backoff not yet elapsed. */
    retrying: number;
    /** WAITING behind a flow-control key (parallelism or rate). */
    waitingFlowControl: number;
    /** WAITING for the account's max_global_parallelism. */
    waitingGlobal: number;
    /** QUEUED behind earlier messages of a FIFO queue. */
    queued: number;
  };
  /** Entries in the dead-letter queue, all accounts, capped. */
  dlqSize: number;
  /** Unfinished messages of FIFO queues (the sum of every queue's lag), capped. */
  queueLag: number;
  /** Flow-control keys that have at least one waiting message, capped. */
  flowControlWaitLists: number;
  /** Due time (Unix ms) of the oldest message that is due and not yet attempted; undefined when none is. */
  oldestDueAt: number | undefined;
}

/** Operability capability of the store: readiness and the scrape-time gauges. */
export interface OpsStore {
  /**
   * Readiness: answers only when the database does; lists the migrations of this build that the database has not
   * applied (a node started against a database another version migrated, or one that failed half-way).
   */
  opsReadiness(): Promise<{ pendingMigrations: string[] }>;
  /** The gauges of docs/metrics.md, from bounded index reads only. */
  opsGauges(p: { now: number }): Promise<StoreGauges>;
  /**
   * Implemented only by a store that runs in a thread of its own: that thread's prom-client registry as JSON
   * (`registry.getMetricsAsJSON()`), merged into the main thread's at scrape time (src/http/metrics-scrape.ts).
   */
  metricsOfStoreThread?(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
}
