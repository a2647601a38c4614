import { ENDED_STATES_SQL } from "../derived-log.js";
import type { RetentionStore, RetentionTable } from "../retention-store.js";
import type { PgContext } from "./context.js";

/**
 * Each table's expiry condition on `$1`, served by logs_time, messages_ended, dedup_expires, usage_minute and
 * request_quota_day. A kept message row (docs/states.md "The message row") expires once it ended before `$1`.
 */
const EXPIRED: Record<RetentionTable, string> = {
  logs: "time < $1",
  messages: `state IN ${ENDED_STATES_SQL} AND finished_at < $1`,
  dedup: "expires_at < $1",
  usage: "minute < $1",
  request_quota: "day < $1",
};

/**
 * One chunk: rows picked by the time index and locked with SKIP LOCKED, so nodes trimming at once take different
 * rows instead of waiting for each other; the outer condition is checked again in case a row was updated meanwhile
 * (a deduplication key reused by a publish gets a new expiry and stays).
 */
const chunkSql = (table: RetentionTable) => {
  const expired = EXPIRED[table];
  return {
    name: `ferry_retention_${table}`,
    text: `WITH gone AS (
      DELETE FROM ${table} WHERE ctid IN (
        SELECT ctid FROM ${table} WHERE ${expired} LIMIT $2 FOR UPDATE SKIP LOCKED)
      AND ${expired} RETURNING 1)
    SELECT count(*)::int AS n FROM gone`,
  };
};

export function retentionQueries(ctx: PgContext): RetentionStore {
  const statements = Object.fromEntries(
    (Object.keys(EXPIRED) as RetentionTable[]).map((table) => [table, chunkSql(table)]),
  ) as Record<RetentionTable, { name: string; text: string }>;
  return {
    // Autocommit on a pooled connection, not through group commit: a chunk must not lengthen the transactions
    // that acknowledge publishes. It touches only expired rows, which no publish writes.
    retentionDelete: async ({ table, before, limit }) => {
      // Derived log entries (src/store/derived-log.ts) older than the cutoff are hidden from then on (logs.ts).
      if (table === "logs") {
        await ctx.query({ name: "ferry_log_horizon", text: "UPDATE log_horizon SET before = GREATEST(before, $1)" }, [
          before,
        ]);
      }
      const [row] = await ctx.query<{ n: number }>(statements[table], [before, limit]);
      return row?.n ?? 0;
    },
  };
}
