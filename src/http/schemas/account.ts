import { type Static, Type, UnixMs } from "./common.js";

const int = (description?: string) => Type.Integer(description ? { description } : {});

/** An account's plan limits (docs/management.md "The account record"; src/domain/plans.ts), overrides applied. */
export const Limits = Type.Object({
  max_message_size: int("Bytes"),
  max_requests_per_day: int(),
  max_requests_per_day_hard: int(),
  max_endpoints_per_topic: int(),
  max_requests_per_second: int(),
  max_dlq_size: int(),
  max_completion_tokens_per_day: int(),
  max_completion_tokens_per_minute: int(),
  max_completions_per_day: int(),
  max_completions_per_minute: int(),
  max_retries: int(),
  max_topics: int(),
  max_schedules: int(),
  max_events_size: int(),
  max_dlq_retention_time_milis: int(),
  max_delay: int("Seconds"),
  max_parallelism: int(),
  max_global_parallelism: int(),
  max_queues: int(),
  retention: int("Days"),
  timeout: int("Seconds"),
  rate_limit: int(),
});
export type Limits = Static<typeof Limits>;

/** `GET /v2/account` (docs/console.md): the token's account, its limits and today's activity. */
export const AccountOverview = Type.Object({
  accountId: Type.String(),
  plan: Type.String({ description: "Plan name in the dialect's spelling" }),
  readOnly: Type.Boolean({ description: "The request was made with the read-only token: every write answers 403" }),
  limits: Limits,
  quota: Type.Object({
    used: int("Requests accepted today (UTC day)"),
    limit: Type.Union([Type.Integer(), Type.Null()], { description: "The daily limit; null when unlimited" }),
    resetsAt: UnixMs,
  }),
  inFlight: int(),
  dlqSize: int(),
});
export type AccountOverview = Static<typeof AccountOverview>;

/** One point of a series: a Go time string and a value (money is fractional). */
export const Point = Type.Object({ x: Type.String(), y: Type.Number() });
export type Point = Static<typeof Point>;

const Series = Type.Object({ id: Type.String(), data_points: Type.Array(Point) });

/** Usage statistics (seed 2.3; docs/management.md; `GET /v2/account/stats`). */
export const UsageStats = Type.Object({
  days: Type.Array(Type.String()),
  daily_requests: Type.Array(
    Type.Object({ x: Type.String(), y: Type.Number(), workflow_message: Type.Integer(), workflow_run: Type.Integer() }),
  ),
  daily_billings: Type.Array(Point),
  daily_bandwidths: Type.Array(Point),
  daily_used: Type.Array(Point),
  daily_used_workflow: Type.Array(Point),
  daily_msgsvc_messages: Type.Array(Series),
  daily_workflow_messages: Type.Array(Series),
  dlq_message_count: int(),
  daily_bandwidth_used: Type.Array(Point),
  total_monthly_billing: Type.Number({ description: "Dollars" }),
});
export type UsageStats = Static<typeof UsageStats>;

const nullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

/** `GET /v2/account/health` (docs/console.md "Health"). */
export const AccountHealth = Type.Object({
  period: Type.String({ description: "1h, 3h, 12h, 1d, 3d, 7d or 30d" }),
  from: UnixMs,
  to: UnixMs,
  delivered: int("Messages delivered in the period (usage counters, exact)"),
  failed: int("Messages failed for good in the period"),
  successRate: nullableNumber("delivered / (delivered + failed); null when no message ended"),
  latency: Type.Object({
    p50: nullableNumber("Publish to delivery, ms"),
    p99: nullableNumber("Publish to delivery, ms"),
    sample: int("Deliveries the percentiles are over (the newest of the period)"),
    sampleCapped: Type.Boolean(),
  }),
  destinations: Type.Array(
    Type.Object({
      url: Type.String(),
      failedAttempts: int(),
      failedMessages: int(),
      lastError: Type.Object({
        time: UnixMs,
        messageId: Type.String(),
        error: Type.String(),
        status: Type.Optional(Type.Integer()),
        bodyStart: Type.Optional(Type.String()),
      }),
    }),
  ),
  destinationsCapped: Type.Boolean(),
});
export type AccountHealth = Static<typeof AccountHealth>;

/** `GET /v2/account/queue-throughput` (docs/console.md "Queues"). */
export const QueueThroughput = Type.Object({
  minutes: int(),
  from: UnixMs,
  to: UnixMs,
  queues: Type.Array(
    Type.Object({ queueName: Type.String(), delivered: int(), perMinute: Type.Number({ description: "Two decimals" }) }),
  ),
  capped: Type.Boolean({ description: "More deliveries than were read: the counts are those of the newest" }),
});
export type QueueThroughput = Static<typeof QueueThroughput>;
