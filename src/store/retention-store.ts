/**
 * Tables that grow with traffic and are trimmed by age in small chunks (docs/operations.md "Table bounds"): the
 * retention loop (src/maintenance/retention.ts) calls `retentionDelete` until a chunk comes back short.
 * - `logs`: by `time` (FERRY_LOG_RETENTION_MS);
 * - `messages`: rows that ended and were kept for their log (docs/states.md "The message row"), by `finished_at`,
 *   with the same cutoff as `logs`;
 * - `dedup`: by `expires_at` (the deduplication window);
 * - `usage`: per-minute counters, by `minute` (the longest statistics period);
 * - `request_quota`: daily quota counters, by `day`.
 */
export type RetentionTable = "logs" | "messages" | "dedup" | "usage" | "request_quota";

export interface RetentionStore {
  /**
   * Deletes at most `limit` rows of `table` whose time column is older than `before` (unix ms, exclusive) and
   * returns how many it deleted. Each call is one short statement through the adapter's usual write path, so a
   * chunk never holds the writer (SQLite) or many row locks (PostgreSQL) for long; several nodes may run it at once.
   */
  retentionDelete(p: { table: RetentionTable; before: number; limit: number }): Promise<number>;
}
