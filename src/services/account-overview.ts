import { DAY_MS, dailyQuota, utcDayStart } from "../domain/daily-quota.js";
import type { PlanLimits } from "../domain/plans.js";
import type { Account } from "../domain/records.js";
import type { Services } from "./context.js";

/** What `GET /v2/account` answers (docs/console.md): the token's account, its limits and today's activity. */
export interface AccountOverview {
  accountId: string;
  /** Plan name in the dialect's spelling. */
  plan: string;
  /** True when the request was made with the account's read-only token: every write answers 403. */
  readOnly: boolean;
  limits: PlanLimits;
  quota: {
    /**
     * Requests accepted today (UTC day): the quota's own counter when the plan has a daily limit; with no limit that
     * counter is not kept (docs/console.md), and the usage counters' `requests` of the day are shown instead.
     */
    used: number;
    /** The lower of max_requests_per_day and max_requests_per_day_hard; null when unlimited. */
    limit: number | null;
    /** Unix ms when the day's count starts again at zero. */
    resetsAt: number;
  };
  inFlight: number;
  dlqSize: number;
}

export async function accountOverview(
  services: Services,
  account: Account,
  p: { readOnly: boolean; planName: string },
): Promise<AccountOverview> {
  const day = utcDayStart(services.clock.now());
  const limits = services.plans.limitsOf(account);
  const { limit, unlimited } = dailyQuota(limits);
  const [activity, today] = await Promise.all([
    services.store.accountActivity({ accountId: account.id, day }),
    unlimited ? services.store.usageBuckets({ accountId: account.id, from: day, stepMs: DAY_MS, count: 1 }) : [],
  ]);
  const requestsToday = today.reduce((sum, b) => sum + (b.metric === "requests" ? b.count : 0), 0);
  return {
    accountId: account.id,
    plan: p.planName,
    readOnly: p.readOnly,
    limits: { ...limits },
    quota: { used: unlimited ? requestsToday : activity.quotaUsed, limit: unlimited ? null : limit, resetsAt: day + DAY_MS },
    inFlight: activity.inFlight,
    dlqSize: activity.dlqSize,
  };
}
