import { type PlanLimits, UNLIMITED } from "./plans.js";

/**
 * The daily quota of publish-type calls (docs/messaging.md "Limits and rate limiting"), written once for the use case
 * that counts it (src/services/limits.ts) and the account's overview that shows it (src/services/account-overview.ts).
 */
export const DAY_MS = 86_400_000;

/** The start (unix ms) of the UTC day `now` falls in: the quota counts per UTC day. */
export function utcDayStart(now: number): number {
  return now - (now % DAY_MS);
}

/**
 * The day's limit: the lower of max_requests_per_day and max_requests_per_day_hard (the soft limit is the one the
 * hosted service answers 429 to; an operator who sets the hard one lower gets the lower). `unlimited` when it is
 * UNLIMITED: no count is kept.
 */
export function dailyQuota(limits: PlanLimits): { limit: number; unlimited: boolean } {
  const limit = Math.min(limits.max_requests_per_day, limits.max_requests_per_day_hard);
  return { limit, unlimited: limit >= UNLIMITED };
}
