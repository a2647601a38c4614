import { ENDED_ROW } from "./row-states.js";
import type { RetentionStore, RetentionTable } from "../retention-store.js";
import type { SqliteContext } from "./context.js";

/**
 * One chunk per call, chosen by the table's time index (logs_time, messages_ended, dedup_expires, usage_minute,
 * request_quota_day)
 * and deleted by its key: rowid for logs, the primary key for the WITHOUT ROWID tables.
 */
const CHUNK_SQL: Record<RetentionTable, string> = {
  logs: "DELETE FROM logs WHERE seq IN (SELECT seq FROM logs WHERE time < @before LIMIT @limit)",
  messages: `DELETE FROM messages WHERE seq IN (SELECT seq FROM messages
    WHERE ${ENDED_ROW} AND finished_at < @before LIMIT @limit)`,
  dedup: `DELETE FROM dedup WHERE (account_id, key) IN (
    SELECT account_id, key FROM dedup WHERE expires_at < @before LIMIT @limit)`,
  usage: `DELETE FROM usage WHERE (account_id, minute, metric) IN (
    SELECT account_id, minute, metric FROM usage WHERE minute < @before LIMIT @limit)`,
  request_quota: `DELETE FROM request_quota WHERE (account_id, day) IN (
    SELECT account_id, day FROM request_quota WHERE day < @before LIMIT @limit)`,
};

export function retentionQueries(ctx: SqliteContext): RetentionStore {
  const statements = Object.fromEntries(
    Object.entries(CHUNK_SQL).map(([table, sql]) => [table, ctx.db.prepare(sql)]),
  ) as Record<RetentionTable, ReturnType<SqliteContext["db"]["prepare"]>>;
  // Derived log entries (src/store/derived-log.ts) older than the cutoff are hidden from then on (logs.ts).
  const horizon = ctx.db.prepare("UPDATE id_counters SET value = MAX(value, ?) WHERE name = 'log_horizon'");
  return {
    // Through group commit like every write: the chunk shares a transaction (and its fsync) with the publishes of
    // the same event-loop turn, and is small enough not to delay them noticeably.
    retentionDelete: ({ table, before, limit }) =>
      ctx.write(() => {
        if (table === "logs") horizon.run(before);
        return statements[table].run({ before, limit }).changes;
      }),
  };
}
