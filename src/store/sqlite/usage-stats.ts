import type { ManagementStore, UsageBucket } from "../management-store.js";
import type { SqliteContext } from "./context.js";

type UsageQueries = Pick<ManagementStore, "usageBuckets" | "accountDlqCount" | "quotaConsume">;

const DAY_MS = 86_400_000;

export function usageQueries(ctx: SqliteContext): UsageQueries {
  const { db } = ctx;
  // Integer division puts each minute row in its bucket (the casts: better-sqlite3 may bind a JS number as REAL, and
  // REAL division would split a bucket). The primary key (account_id, minute, metric) serves the range.
  const buckets = db.prepare(
    `SELECT (minute - CAST(@from AS INTEGER)) / CAST(@step AS INTEGER) AS bucket, metric, SUM(count) AS count, SUM(bytes) AS bytes
     FROM usage WHERE account_id = @accountId AND minute >= @from AND minute < @to
     GROUP BY bucket, metric`,
  );
  const dlqCount = db.prepare("SELECT COUNT(*) AS n FROM dlq WHERE account_id = ?");
  const quotaRow = db.prepare(
    "INSERT INTO request_quota (account_id, day, used) VALUES (?, ?, 0) ON CONFLICT (account_id, day) DO NOTHING",
  );
  const quotaAdd = db.prepare(
    "UPDATE request_quota SET used = used + ? WHERE account_id = ? AND day = ? AND used + ? <= ? RETURNING used",
  );
  const quotaUsed = db.prepare("SELECT used FROM request_quota WHERE account_id = ? AND day = ?");
  // Yesterday's row is kept (a node whose clock lags a little still finds it); older ones are dropped as we go.
  const quotaTrim = db.prepare("DELETE FROM request_quota WHERE account_id = ? AND day < ?");

  return {
    usageBuckets: async ({ accountId, from, stepMs, count }) =>
      buckets.all({ accountId, from, step: stepMs, to: from + stepMs * count }) as UsageBucket[],

    accountDlqCount: async ({ accountId }) => (dlqCount.get(accountId) as { n: number }).n,

    quotaConsume: ({ accountId, day, n, limit }) =>
      ctx.write(() => {
        quotaTrim.run(accountId, day - DAY_MS);
        quotaRow.run(accountId, day);
        const added = quotaAdd.get(n, accountId, day, n, limit) as { used: number } | undefined;
        if (added) return { allowed: true, used: added.used };
        return { allowed: false, used: (quotaUsed.get(accountId, day) as { used: number }).used };
      }),
  };
}
