import { LIVE_ROW_SQL } from "../derived-log.js";
import type { OverviewStore } from "../overview-store.js";
import type { PgContext } from "./context.js";

// COUNT is bigint (a string in pg), hence the casts to int4/int8 the pool parses to numbers.
const activitySql = {
  name: "ferry_account_activity",
  text: `SELECT (SELECT COUNT(*) FROM messages WHERE account_id = $1 AND ${LIVE_ROW_SQL})::int8 AS "inFlight",
    (SELECT COALESCE(MAX(used), 0) FROM request_quota WHERE account_id = $1 AND day = $2::int8)::int8 AS "quotaUsed",
    (SELECT COUNT(*) FROM dlq WHERE account_id = $1)::int8 AS "dlqSize"`,
};

export function overviewQueries(ctx: PgContext): OverviewStore {
  return {
    accountActivity: async ({ accountId, day }) => {
      const [row] = await ctx.query<{ inFlight: number; quotaUsed: number; dlqSize: number }>(activitySql, [
        accountId,
        day,
      ]);
      return row ?? { inFlight: 0, quotaUsed: 0, dlqSize: 0 };
    },
  };
}
