import type { OverviewStore } from "../overview-store.js";
import { LIVE_ROW } from "./row-states.js";
import type { SqliteContext } from "./context.js";

export function overviewQueries(ctx: SqliteContext): OverviewStore {
  const { db } = ctx;
  // messages_account (account_id, seq) and dlq's account index serve the counts; request_quota's key the lookup.
  const activity = db.prepare(
    `SELECT (SELECT COUNT(*) FROM messages WHERE account_id = @accountId AND ${LIVE_ROW}) AS inFlight,
            (SELECT COALESCE(MAX(used), 0) FROM request_quota WHERE account_id = @accountId AND day = @day) AS quotaUsed,
            (SELECT COUNT(*) FROM dlq WHERE account_id = @accountId) AS dlqSize`,
  );
  return {
    accountActivity: async ({ accountId, day }) =>
      activity.get({ accountId, day }) as { inFlight: number; quotaUsed: number; dlqSize: number },
  };
}
