import { type FailureCause, failureCause, percentile, successRate } from "../domain/health.js";
import { type StatsPeriod, statsPeriods } from "../domain/stats-period.js";
import type { Account } from "../domain/records.js";
import type { Services } from "./context.js";

/** Deliveries read for the latency percentiles: the newest of the period (docs/console.md "Health"). */
export const LATENCY_SAMPLE = 10_000;
/** ERROR and FAILED entries read for the ranking of destinations: the newest of the period. */
export const FAILURE_SCAN = 10_000;
/** Destinations the ranking lists. */
export const TOP_DESTINATIONS = 10;
/** Deliveries read for the queues' throughput: the newest of the window. */
export const THROUGHPUT_SCAN = 100_000;

export interface DestinationHealth {
  url: string;
  /** Failed attempts (each ERROR entry) in the period. */
  failedAttempts: number;
  /** Messages that failed for good (went to the DLQ) in the period. */
  failedMessages: number;
  lastError: FailureCause & { time: number; messageId: string };
}

/** What `GET /v2/account/health` answers (docs/console.md "Health"). */
export interface AccountHealth {
  period: StatsPeriod;
  from: number;
  to: number;
  /** Messages delivered and failed for good in the period, from the usage counters (exact). */
  delivered: number;
  failed: number;
  /** delivered / (delivered + failed); null when no message ended. */
  successRate: number | null;
  /** Publish (or the end of a requested delay) to delivery, in ms, over the newest LATENCY_SAMPLE deliveries. */
  latency: { p50: number | null; p99: number | null; sample: number; sampleCapped: boolean };
  destinations: DestinationHealth[];
  /** True when the period had more than FAILURE_SCAN failed entries: the counts are those of the newest ones. */
  destinationsCapped: boolean;
}

export async function accountHealth(services: Services, account: Account, period: StatsPeriod): Promise<AccountHealth> {
  const { store, clock } = services;
  const to = clock.now() + 1;
  const { stepMs, points } = statsPeriods[period];
  const from = to - stepMs * points;
  const accountId = account.id;
  const [usage, latencies, failures] = await Promise.all([
    store.usageBuckets({ accountId, from, stepMs: to - from, count: 1 }),
    store.deliveryLatencyList({ accountId, from, to, limit: LATENCY_SAMPLE }),
    store.destinationFailureList({ accountId, from, to, scanLimit: FAILURE_SCAN, limit: TOP_DESTINATIONS }),
  ]);
  const sum = (metric: string) => usage.reduce((n, b) => n + (b.metric === metric ? b.count : 0), 0);
  const delivered = sum("delivered");
  const failed = sum("failed");
  return {
    period,
    from,
    to,
    delivered,
    failed,
    successRate: successRate(delivered, failed),
    latency: {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      sample: latencies.length,
      sampleCapped: latencies.length >= LATENCY_SAMPLE,
    },
    destinations: failures.destinations.map((d) => ({
      url: d.url,
      failedAttempts: d.errors,
      failedMessages: d.failed,
      lastError: { ...failureCause(d.last.details), time: d.last.time, messageId: d.last.messageId },
    })),
    destinationsCapped: failures.scanned >= FAILURE_SCAN,
  };
}

export interface QueueThroughput {
  minutes: number;
  from: number;
  to: number;
  queues: { queueName: string; delivered: number; perMinute: number }[];
  /** True when the window had more than THROUGHPUT_SCAN deliveries: the counts are those of the newest ones. */
  capped: boolean;
}

/** Messages each queue delivered in the last `minutes`, and that per minute (docs/console.md "Queues"). */
export async function queueThroughput(services: Services, account: Account, minutes: number): Promise<QueueThroughput> {
  const to = services.clock.now() + 1;
  const from = to - minutes * 60_000;
  const { queues, scanned } = await services.store.queueDeliveryList({
    accountId: account.id,
    from,
    to,
    limit: THROUGHPUT_SCAN,
  });
  return {
    minutes,
    from,
    to,
    queues: queues
      .map((q) => ({ ...q, perMinute: Math.round((q.delivered / minutes) * 100) / 100 }))
      .sort((a, b) => b.delivered - a.delivered || a.queueName.localeCompare(b.queueName)),
    capped: scanned >= THROUGHPUT_SCAN,
  };
}
