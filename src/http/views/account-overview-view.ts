import type { PlanLimits } from "../../domain/plans.js";
import type { AccountOverview as OverviewResult } from "../../services/account-overview.js";
import type { AccountHealth as HealthResult, QueueThroughput as ThroughputResult } from "../../services/health.js";
import type { Point as PointResult, Series, UsageStats as StatsResult } from "../../services/stats.js";
import type { AccountHealth, AccountOverview, Limits, Point, QueueThroughput, UsageStats } from "../schemas/account.js";

/**
 * The token's own account as the console reads it (docs/console.md): the overview, usage statistics, health and
 * queue throughput, each built field by field into its wire shape (src/http/schemas/account.ts).
 */

/** True when both types name the same keys: a plan limit added to the domain must be added to the wire shape. */
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
const LIMITS_MATCH: SameKeys<PlanLimits, Limits> = true;
void LIMITS_MATCH;

export function accountOverviewView(o: OverviewResult): AccountOverview {
  const limits: Limits = { ...o.limits };
  return {
    accountId: o.accountId,
    plan: o.plan,
    readOnly: o.readOnly,
    limits,
    quota: { used: o.quota.used, limit: o.quota.limit, resetsAt: o.quota.resetsAt },
    inFlight: o.inFlight,
    dlqSize: o.dlqSize,
  };
}

const points = (data: PointResult[]): Point[] => data.map((p) => ({ x: p.x, y: p.y }));
const series = (list: Series[]) => list.map((s) => ({ id: s.id, data_points: points(s.data_points) }));

/** Usage statistics (seed 2.3): `GET /v2/account/stats` and the management API's stats. */
export function usageStatsView(s: StatsResult): UsageStats {
  return {
    days: s.days,
    daily_requests: s.daily_requests.map((p) => ({
      x: p.x,
      y: p.y,
      workflow_message: p.workflow_message,
      workflow_run: p.workflow_run,
    })),
    daily_billings: points(s.daily_billings),
    daily_bandwidths: points(s.daily_bandwidths),
    daily_used: points(s.daily_used),
    daily_used_workflow: points(s.daily_used_workflow),
    daily_msgsvc_messages: series(s.daily_msgsvc_messages),
    daily_workflow_messages: series(s.daily_workflow_messages),
    dlq_message_count: s.dlq_message_count,
    daily_bandwidth_used: points(s.daily_bandwidth_used),
    total_monthly_billing: s.total_monthly_billing,
  };
}

/** `GET /v2/account/health` (docs/console.md "Health"): a destination's `status` and `bodyStart` only when known. */
export function accountHealthView(h: HealthResult): AccountHealth {
  return {
    period: h.period,
    from: h.from,
    to: h.to,
    delivered: h.delivered,
    failed: h.failed,
    successRate: h.successRate,
    latency: { p50: h.latency.p50, p99: h.latency.p99, sample: h.latency.sample, sampleCapped: h.latency.sampleCapped },
    destinations: h.destinations.map((d) => {
      const lastError: AccountHealth["destinations"][number]["lastError"] = {
        time: d.lastError.time,
        messageId: d.lastError.messageId,
        error: d.lastError.error,
      };
      if (d.lastError.status !== undefined) lastError.status = d.lastError.status;
      if (d.lastError.bodyStart !== undefined) lastError.bodyStart = d.lastError.bodyStart;
      return { url: d.url, failedAttempts: d.failedAttempts, failedMessages: d.failedMessages, lastError };
    }),
    destinationsCapped: h.destinationsCapped,
  };
}

/** `GET /v2/account/queue-throughput` (docs/console.md "Queues"). */
export function queueThroughputView(t: ThroughputResult): QueueThroughput {
  return {
    minutes: t.minutes,
    from: t.from,
    to: t.to,
    queues: t.queues.map((q) => ({ queueName: q.queueName, delivered: q.delivered, perMinute: q.perMinute })),
    capped: t.capped,
  };
}
