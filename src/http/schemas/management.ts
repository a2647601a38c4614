import { type Static, Type } from "./common.js";
import { inDeclaredOrder } from "./wire-order.js";

/** The JSON string `"OK"`: what the management API's action routes answer (docs/management.md). */
export const Ok = Type.Literal("OK", { description: 'The JSON string "OK"' });
export type Ok = Static<typeof Ok>;

/** A plan's limits (docs/management.md "Plan limits"), in the account record's order; every one is an integer. */
export const PlanLimits = Type.Object({
  max_message_size: Type.Integer(),
  max_requests_per_day: Type.Integer(),
  max_requests_per_day_hard: Type.Integer(),
  max_endpoints_per_topic: Type.Integer(),
  max_requests_per_second: Type.Integer(),
  max_dlq_size: Type.Integer(),
  max_completion_tokens_per_day: Type.Integer(),
  max_completion_tokens_per_minute: Type.Integer(),
  max_completions_per_day: Type.Integer(),
  max_completions_per_minute: Type.Integer(),
  max_retries: Type.Integer(),
  max_topics: Type.Integer(),
  max_schedules: Type.Integer(),
  max_events_size: Type.Integer(),
  max_dlq_retention_time_milis: Type.Integer(),
  max_delay: Type.Integer(),
  max_parallelism: Type.Integer(),
  max_global_parallelism: Type.Integer(),
  max_queues: Type.Integer(),
  retention: Type.Integer({ description: "Days" }),
  timeout: Type.Integer({ description: "Seconds" }),
  rate_limit: Type.Integer(),
});
export type PlanLimits = Static<typeof PlanLimits>;

/**
 * The messaging-account record (docs/management.md "The account record"): every field, in the seed's order, which
 * the wire keeps (`inDeclaredOrder`); `modifying_state` only while a change is in progress, `enterprise` only on
 * enterprise accounts. Times are Unix seconds.
 */
export const ManagementAccount = inDeclaredOrder(
  Type.Object({
    customer_id: Type.String(),
    id: Type.String(),
    password: Type.String(),
    token: Type.String(),
    read_only_token: Type.String(),
    active: Type.Boolean(),
    state: Type.String(),
    modifying_state: Type.Optional(Type.String()),
    last_plan_upgrade_time: Type.Integer({ description: "Unix seconds; 0 when never changed" }),
    ...PlanLimits.properties,
    type: Type.Union([Type.Literal("free"), Type.Literal("paid")]),
    reserved_type: Type.String({ description: 'The fixed plan\'s name, "enterprise:<id>", or ""' }),
    reserved_price: Type.Number(),
    prod_pack_enabled: Type.Boolean(),
    prometheus_enabled: Type.Union([Type.Literal("true"), Type.Literal("false")]),
    enterprise: Type.Optional(Type.Object({ enabled: Type.Boolean() })),
    region: Type.String(),
    budget: Type.Integer({ description: "Monthly dollars; 0: no limit" }),
    created_by: Type.String(),
    creation_time: Type.Integer({ description: "Unix seconds" }),
  }),
);
export type ManagementAccount = Static<typeof ManagementAccount>;

/** One point of a usage series: `x` is the Go time text of its step (`2026-11-26 18:00:00 +0000 UTC`). */
export const UsagePoint = Type.Object({ x: Type.String(), y: Type.Number() });
export type UsagePoint = Static<typeof UsagePoint>;

const Series = Type.Object({ id: Type.String(), data_points: Type.Array(UsagePoint) });

/**
 * Usage statistics of a messaging account (docs/management.md "Usage statistics"; `GET /v2/msgsvc/stats` and the
 * console's `GET /v2/account/stats`): the month's daily series, the period's series, the DLQ size and the month's
 * billing. Billing values are dollars, so fractional (`y` is a `Number`).
 */
export const UsageStats = Type.Object({
  days: Type.Array(Type.String()),
  daily_requests: Type.Array(
    Type.Object({ x: Type.String(), y: Type.Number(), workflow_message: Type.Integer(), workflow_run: Type.Integer() }),
  ),
  daily_billings: Type.Array(UsagePoint),
  daily_bandwidths: Type.Array(UsagePoint),
  daily_used: Type.Array(UsagePoint),
  daily_used_workflow: Type.Array(UsagePoint),
  daily_msgsvc_messages: Type.Array(Series),
  daily_workflow_messages: Type.Array(Series),
  dlq_message_count: Type.Integer(),
  daily_bandwidth_used: Type.Array(UsagePoint),
  total_monthly_billing: Type.Number({ description: "Dollars" }),
});
export type UsageStats = Static<typeof UsageStats>;
