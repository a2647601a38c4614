/**
 * Plan limits of a messaging account (docs/management.md "Plan limits"). Where the reference has `?`, a value between
 * the known columns was chosen. Every value can be overridden per plan with FERRY_PLAN_<PLAN>_<FIELD> (see config).
 */
export interface PlanLimits {
  max_message_size: number;
  max_requests_per_day: number;
  max_requests_per_day_hard: number;
  max_endpoints_per_topic: number;
  max_requests_per_second: number;
  max_dlq_size: number;
  max_completion_tokens_per_day: number;
  max_completion_tokens_per_minute: number;
  max_completions_per_day: number;
  max_completions_per_minute: number;
  max_retries: number;
  max_topics: number;
  max_schedules: number;
  max_events_size: number;
  max_dlq_retention_time_milis: number;
  max_delay: number;
  max_parallelism: number;
  max_global_parallelism: number;
  max_queues: number;
  retention: number;
  timeout: number;
  rate_limit: number;
}

export type PlanName = "free" | "paid" | "msgsvc_fixed_1m" | "msgsvc_fixed_10m" | "msgsvc_fixed_100m" | "msgsvc_fixed";

const DAY_MS = 86_400_000;
/** The hosted service's "unlimited" (int32 max); FERRY_PLAN_<PLAN>_<FIELD>=unlimited sets it. */
export const UNLIMITED = 2_147_483_647;

const paid: PlanLimits = {
  max_message_size: 10 * 1024 * 1024,
  // "Unlimited" on the hosted pay-as-you-go plan; a self-hosted service must not stop by surprise.
  max_requests_per_day: UNLIMITED,
  max_requests_per_day_hard: UNLIMITED,
  max_endpoints_per_topic: 100,
  max_requests_per_second: 100_000,
  max_dlq_size: 1_000_000,
  max_completion_tokens_per_day: 10_000,
  max_completion_tokens_per_minute: 1000,
  max_completions_per_day: 100,
  max_completions_per_minute: 10,
  max_retries: 20,
  max_topics: 100,
  max_schedules: 1000,
  max_events_size: 100_000,
  max_dlq_retention_time_milis: 7 * DAY_MS,
  max_delay: 365 * 86_400,
  max_parallelism: 100,
  max_global_parallelism: 10_000,
  max_queues: 100,
  retention: 14,
  timeout: 7200,
  rate_limit: 100,
};

export const plans: Record<PlanName, PlanLimits> = {
  free: {
    ...paid,
    max_message_size: 1024 * 1024,
    max_requests_per_day: 1000,
    max_requests_per_day_hard: 1000,
    max_requests_per_second: 100,
    max_topics: 1,
    max_schedules: 10,
    max_queues: 10,
    max_parallelism: 2,
    max_global_parallelism: 10,
    max_retries: 3,
    max_delay: 7 * 86_400,
    timeout: 900,
    max_dlq_retention_time_milis: 3 * DAY_MS,
    max_events_size: 10_000,
    retention: 3,
  },
  paid,
  msgsvc_fixed_1m: {
    ...paid,
    max_message_size: 50 * 1024 * 1024,
    max_requests_per_day: 1_000_000,
    max_requests_per_day_hard: 10_000_000,
    max_requests_per_second: 1000,
    max_endpoints_per_topic: 1000,
    max_topics: 1000,
    max_schedules: 1_000_000,
    max_queues: 1000,
    max_parallelism: 200,
    max_global_parallelism: 200,
    max_delay: UNLIMITED,
    timeout: 21_600,
    max_dlq_size: UNLIMITED,
    max_dlq_retention_time_milis: 30 * DAY_MS,
    retention: 7,
  },
  msgsvc_fixed_10m: {
    ...paid,
    max_message_size: 50 * 1024 * 1024,
    max_requests_per_day: 10_000_000,
    max_requests_per_day_hard: 100_000_000,
    max_requests_per_second: 5000,
    max_endpoints_per_topic: 1000,
    max_topics: 1000,
    max_schedules: 1_000_000,
    max_queues: 1000,
    max_parallelism: 500,
    max_global_parallelism: 500,
    max_delay: UNLIMITED,
    timeout: 21_600,
    max_dlq_size: UNLIMITED,
    max_dlq_retention_time_milis: 90 * DAY_MS,
    retention: 14,
  },
  msgsvc_fixed_100m: {
    ...paid,
    max_message_size: 50 * 1024 * 1024,
    max_requests_per_day: 100_000_000,
    max_requests_per_day_hard: 1_000_000_000,
    max_requests_per_second: 10_000,
    max_endpoints_per_topic: 1000,
    max_topics: 1000,
    max_schedules: 1_000_000,
    max_queues: 1000,
    max_parallelism: 1000,
    max_global_parallelism: 1000,
    max_delay: UNLIMITED,
    timeout: 21_600,
    max_dlq_size: UNLIMITED,
    max_dlq_retention_time_milis: 90 * DAY_MS,
    retention: 14,
  },
  msgsvc_fixed: {
    ...paid,
    max_message_size: 50 * 1024 * 1024,
    max_delay: UNLIMITED,
    timeout: 21_600,
    max_dlq_size: UNLIMITED,
    max_dlq_retention_time_milis: 30 * DAY_MS,
  },
};

export const planNames = Object.keys(plans) as PlanName[];

export function isPlanName(name: string): name is PlanName {
  return Object.hasOwn(plans, name);
}

/** Every limit field, in the record's order (used to validate FERRY_PLAN_<PLAN>_<FIELD> names). */
export const limitFields = Object.keys(paid) as (keyof PlanLimits)[];

export function isLimitField(name: string): name is keyof PlanLimits {
  return (limitFields as string[]).includes(name);
}

/** Configured per-plan values that replace the built-in ones (FERRY_PLAN_<PLAN>_<FIELD>). */
export type PlanOverrides = Partial<Record<PlanName, Partial<PlanLimits>>>;

/**
 * The plan table in force: the built-in limits with FERRY_PLAN_<PLAN>_<FIELD> overrides applied. One is built per
 * server and held by the services object (never a module-level variable), so two servers in one process may run
 * different tables.
 */
export interface PlanBook {
  /** The one place an account's limits come from; an unknown plan name gets the pay-as-you-go limits. */
  limitsOf(account: { plan: PlanName }): PlanLimits;
}

export function planBook(overrides: PlanOverrides = {}): PlanBook {
  const table = planTable(overrides);
  return { limitsOf: (account) => table[account.plan] ?? table.paid };
}

/** The built-in table with the overrides applied; plans without overrides keep their built-in limits. */
export function planTable(overrides: PlanOverrides): Record<PlanName, PlanLimits> {
  const table = { ...plans };
  for (const name of planNames) {
    const o = overrides[name];
    if (o) table[name] = { ...plans[name], ...o };
  }
  return table;
}
