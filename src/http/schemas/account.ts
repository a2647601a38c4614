import { type Static, Type, UnixMs } from "./common.js";
import { PlanLimits as Limits, UsagePoint as Point, UsageStats } from "./management.js";

const int = (description?: string) => Type.Integer(description ? { description } : {});

/** An account's plan limits: the management record's (src/http/schemas/management.ts), overrides applied. */
export { Limits };

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

/** Usage statistics (seed 2.3): the same shape as the management API's `stats` (src/http/schemas/management.ts). */
export { Point, UsageStats };

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
