import { DAY_MS, dailyQuota, utcDayStart } from "../domain/daily-quota.js";
import { type PlanBook, UNLIMITED } from "../domain/plans.js";
import { AppError } from "../errors.js";
import type { Account } from "../domain/records.js";
import type { Services } from "./context.js";

/**
 * The daily quota of publish-type calls (publish, enqueue, batch: docs/messaging.md "Limits and rate limiting"): `n`
 * messages about to be accepted are counted against the account's UTC day in the store, atomically, before they are
 * written, so the quota holds across every node sharing the database. The day's limit is src/domain/daily-quota.ts's.
 * Unlimited plans skip the check and its write. Callbacks and schedule triggers are
 * not refused here: no client waits for them.
 */
export async function enforceDailyQuota(services: Services, account: Account, n: number): Promise<void> {
  const { limit, unlimited } = dailyQuota(services.plans.limitsOf(account));
  if (unlimited || n === 0) return;
  const day = utcDayStart(services.clock.now());
  const { allowed, used } = await services.store.quotaConsume({ accountId: account.id, day, n, limit });
  if (allowed) return;
  throw new AppError(
    "rate_limited",
    `daily quota exceeded: max_requests_per_day is ${limit} and ${used} requests were accepted today (UTC)`,
    {
      "RateLimit-Limit": String(limit),
      "RateLimit-Remaining": String(Math.max(0, limit - used)),
      "RateLimit-Reset": String((day + DAY_MS) / 1000),
    },
  );
}

/**
 * max_requests_per_second on the messaging API, per node: a fixed one-second window per account in memory. This is
 * an approximation on purpose. A burst limit protects the node that serves the burst; an exact cluster-wide count
 * would cost a database write on every request, reads included. With N nodes an account may reach N times its
 * limit in one second; the daily quota, which is what is billed, is exact.
 */
export class BurstLimiter {
  constructor(private readonly plans: PlanBook) {}

  private readonly windows = new Map<string, { second: number; count: number }>();

  /** Counts one request; throws 429 with only the Burst-RateLimit-* headers when the second's budget is spent. */
  take(account: Account, now: number): void {
    const limit = this.plans.limitsOf(account).max_requests_per_second;
    if (limit >= UNLIMITED) return;
    const second = Math.floor(now / 1000);
    let w = this.windows.get(account.id);
    if (w === undefined || w.second !== second) {
      if (w === undefined && this.windows.size >= 100_000) this.sweep(second);
      w = { second, count: 0 };
      this.windows.set(account.id, w);
    }
    if (w.count >= limit) {
      // No RateLimit-* here: the SDKs tell a daily-quota 429 from a burst 429 by RateLimit-Limit (docs/messaging.md
      // "Limits and rate limiting").
      throw new AppError("rate_limited", `burst rate limit exceeded: max_requests_per_second is ${limit}`, {
        "Burst-RateLimit-Limit": String(limit),
        "Burst-RateLimit-Remaining": "0",
        "Burst-RateLimit-Reset": String(second + 1),
      });
    }
    w.count++;
  }

  private sweep(second: number): void {
    for (const [id, w] of this.windows) if (w.second < second) this.windows.delete(id);
  }
}
