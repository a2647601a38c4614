import type { ManagementStore, UsageBucket } from "../management-store.js";
import type { PgContext } from "./context.js";
import { QuotaCounter } from "./quota.js";

type UsageQueries = Pick<ManagementStore, "usageBuckets" | "accountDlqCount" | "quotaConsume">;

// BIGINT division puts each minute row in its bucket; SUM(bigint) is NUMERIC (a string in pg), hence the casts back
// to int8, which the pool parses to numbers. The primary key (account_id, minute, metric) serves the range.
const bucketsSql = {
  name: "ferry_usage_buckets",
  text: `SELECT (minute - $2::int8) / $3::int8 AS bucket, metric, SUM(count)::int8 AS count, SUM(bytes)::int8 AS bytes
    FROM usage WHERE account_id = $1 AND minute >= $2::int8 AND minute < $4::int8
    GROUP BY bucket, metric`,
};
const dlqCountSql = { name: "ferry_dlq_count", text: "SELECT COUNT(*) AS n FROM dlq WHERE account_id = $1" };

export function usageQueries(ctx: PgContext): UsageQueries {
  const quota = new QuotaCounter(ctx);
  return {
    usageBuckets: async ({ accountId, from, stepMs, count }) =>
      ctx.query<UsageBucket>(bucketsSql, [accountId, from, stepMs, from + stepMs * count]),

    accountDlqCount: async ({ accountId }) => (await ctx.query<{ n: number }>(dlqCountSql, [accountId]))[0]?.n ?? 0,

    quotaConsume: (p) => quota.consume(p),
  };
}
