import { Counter, Gauge, Histogram } from "prom-client";
import { threadRegistry } from "./registry.js";

/**
 * Every metric Ferry records, in one place (docs/metrics.md lists them; a test keeps the two in sync). Labels are
 * bounded: account id, outcome, reason (an error code of src/errors.ts), state, route template, method, status.
 * Never a URL, a token, a header or a body.
 */
const registers = [threadRegistry];

/** Seconds; from 1 ms to 2 min, for attempts (a destination may take up to the plan's timeout) and latencies. */
const SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export const publishes = new Counter({
  name: "ferry_publishes_total",
  help: "Messages published, by account and outcome (accepted, duplicate, refused); refusals carry the error code as reason",
  labelNames: ["account", "outcome", "reason"] as const,
  registers,
});

export const deliveries = new Counter({
  name: "ferry_deliveries_total",
  help: "Finished delivery attempts by account and outcome (delivered, retry, failed, canceled)",
  labelNames: ["account", "outcome"] as const,
  registers,
});

export const attemptDuration = new Histogram({
  name: "ferry_delivery_attempt_duration_seconds",
  help: "Duration of one delivery attempt (the HTTP request to the destination), by outcome",
  labelNames: ["outcome"] as const,
  buckets: SECONDS_BUCKETS,
  registers,
});

export const firstAttemptLatency = new Histogram({
  name: "ferry_publish_to_first_attempt_seconds",
  help: "From the moment a message became due (its publish, or the end of its delay) to the start of its first attempt",
  buckets: SECONDS_BUCKETS,
  registers,
});

export const callbacks = new Counter({
  name: "ferry_callbacks_total",
  help: "Finished callback and failure-callback attempts by kind and outcome",
  labelNames: ["kind", "outcome"] as const,
  registers,
});

export const dlqEntries = new Counter({
  name: "ferry_dlq_entries_total",
  help: "Messages moved to the dead-letter queue, by account",
  labelNames: ["account"] as const,
  registers,
});

export const scheduleTicks = new Counter({
  name: "ferry_schedule_ticks_total",
  help: "Schedule ticks by outcome: fired (published its messages) or missed (skipped: older than 60 s when seen)",
  labelNames: ["outcome"] as const,
  registers,
});

export const commitBatchSize = new Histogram({
  name: "ferry_store_commit_batch_size",
  help: "Write operations committed together in one store transaction (group commit)",
  buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2000],
  registers,
});

export const commitDuration = new Histogram({
  name: "ferry_store_commit_duration_seconds",
  help: "Duration of one group-commit transaction, from BEGIN to COMMIT returned",
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers,
});

export const httpRequests = new Counter({
  name: "ferry_http_requests_total",
  help: "HTTP requests by route template, method and status code",
  labelNames: ["route", "method", "status"] as const,
  registers,
});

export const httpDuration = new Histogram({
  name: "ferry_http_request_duration_seconds",
  help: "HTTP request duration by route template",
  labelNames: ["route"] as const,
  buckets: SECONDS_BUCKETS,
  registers,
});

// Gauges read from the database at scrape time (scrape.ts): the last successful read, cached.
export const messagesByState = new Gauge({
  name: "ferry_messages",
  help: "Live messages by state (pending, delayed, active, retrying, waiting_flow_control, waiting_global, queued); each count saturates at 100000",
  labelNames: ["state"] as const,
  registers,
});

export const dlqSize = new Gauge({
  name: "ferry_dlq_size",
  help: "Entries in the dead-letter queue, all accounts (saturates at 100000)",
  registers,
});

export const queueLag = new Gauge({
  name: "ferry_queue_lag_messages",
  help: "Unfinished messages of FIFO queues, all queues (saturates at 100000)",
  registers,
});

export const deliveryLag = new Gauge({
  name: "ferry_delivery_lag_seconds",
  help: "Age of the oldest message that is due and not yet attempted (0 when none is): how far behind delivery is",
  registers,
});

export const flowControlWaitLists = new Gauge({
  name: "ferry_flow_control_wait_lists",
  help: "Flow-control keys with at least one message waiting (saturates at 100000)",
  registers,
});

export const gaugesAge = new Gauge({
  name: "ferry_store_gauges_age_seconds",
  help: "Age of the database-derived gauges served by this scrape (they are cached; a read that times out keeps the old values)",
  registers,
});

export const gaugeReadFailures = new Counter({
  name: "ferry_store_gauge_read_failures_total",
  help: "Scrape-time reads of the database-derived gauges that failed or timed out",
  registers,
});

export const workflowRuns = new Gauge({
  name: "ferry_workflow_runs",
  help: "Workflow runs kept (database) by state: RUN_STARTED, RUN_SUCCESS, RUN_FAILED, RUN_CANCELED",
  labelNames: ["state"] as const,
  registers,
});

export const workflowWaiters = new Gauge({
  name: "ferry_workflow_waiters",
  help: "Live waitForEvent waiters, all accounts (database)",
  registers,
});

export const workflowSteps = new Counter({
  name: "ferry_workflow_steps_total",
  help: "Finished delivery attempts of workflow steps by outcome (delivered, retry, failed, canceled)",
  labelNames: ["outcome"] as const,
  registers,
});

export const draining = new Gauge({
  name: "ferry_draining",
  help: "1 while this node drains after SIGTERM (its /ready answers 503), else 0",
  registers,
});

export const relayCalls = new Counter({
  name: "ferry_pg_relay_calls_total",
  help:
    "PostgreSQL write relay: this node's plain writes by store method and by who wrote them (leader: answered by the " +
    "relay's leader; self_after_loss: written again by this node after the leader's answer was lost)",
  labelNames: ["method", "written_by"] as const,
  registers,
});

export const relayServed = new Counter({
  name: "ferry_pg_relay_served_total",
  help: "PostgreSQL write relay: other nodes' writes this node committed as the relay's leader, by store method",
  labelNames: ["method"] as const,
  registers,
});

/** Records a store commit (both write batchers). */
export function recordCommit(operations: number, startedAt: number): void {
  commitBatchSize.observe(operations);
  commitDuration.observe((performance.now() - startedAt) / 1000);
}
