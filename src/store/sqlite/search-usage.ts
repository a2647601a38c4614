import type { SearchDocumentStore } from "../search-document-store.js";
import type { SqliteContext } from "./context.js";

/** Per-index usage counters of the search data plane on SQLite (daily and monthly limits, throughput_vector). */
export function searchUsageQueries(
  ctx: SqliteContext,
): Pick<SearchDocumentStore, "searchUsageConsume" | "searchUsageSum" | "searchUsageSeries"> {
  const { db } = ctx;
  const usageAdd = db.prepare(
    `INSERT INTO search_usage (index_id, kind, minute, count) VALUES (?, ?, ?, ?)
     ON CONFLICT (index_id, kind, minute) DO UPDATE SET count = count + excluded.count`,
  );
  const usageSum = db.prepare(
    "SELECT COALESCE(SUM(count), 0) AS n FROM search_usage WHERE index_id = ? AND kind = ? AND minute >= ?",
  );

  return {
    searchUsageConsume: ({ indexId, kind, n, now, since, limit }) =>
      ctx.write(() => {
        const used = (usageSum.get(indexId, kind, since) as { n: number }).n;
        if (limit >= 0 && used + n > limit) return { allowed: false, used };
        usageAdd.run(indexId, kind, now - (now % 60_000), n);
        return { allowed: true, used: used + n };
      }),

    searchUsageSum: async ({ indexId, kind, since }) => (usageSum.get(indexId, kind, since) as { n: number }).n,

    searchUsageSeries: async ({ indexId, from, stepMs, count }) => {
      const out = new Array<number>(count).fill(0);
      const rows = db
        .prepare("SELECT minute, count FROM search_usage WHERE index_id = ? AND minute >= ? AND minute < ? AND kind != 'bandwidth'")
        .all(indexId, from, from + stepMs * count) as { minute: number; count: number }[];
      for (const r of rows) {
        const i = Math.floor((r.minute - from) / stepMs);
        if (i >= 0 && i < count) out[i]! += r.count;
      }
      return out;
    },
  };
}
