import type { DlqFilter, DlqStore } from "../dlq-store.js";
import type { SqliteContext } from "./context.js";
import { filterSql } from "./filters.js";
import { seqPage } from "../pages.js";
import { type DlqRow, dlqEntryFromRow } from "../rows-shared.js";

/** WHERE terms of a DLQ filter; fromDate/toDate apply to the time the entry was written. */
export function dlqWhere(filter: DlqFilter): { where: string[]; params: unknown[] } {
  const { where, params } = filterSql(filter, { time: "failed_at", idColumn: "message_id" });
  const anyOf = (values: unknown[] | undefined, column: string) => {
    if (!values || values.length === 0) return;
    where.push(`${column} IN (${values.map(() => "?").join(", ")})`);
    params.push(...values);
  };
  anyOf(filter.dlqIds, "dlq_id");
  anyOf(filter.responseStatus, "response_status");
  // A workflow step's run is in its spec (src/domain/workflow.ts WorkflowLink).
  anyOf(filter.workflowRunId, "json_extract(spec, '$.workflow.runId')");
  if (filter.workflowOnly) where.push("json_extract(spec, '$.workflow.runId') IS NOT NULL");
  return { where, params };
}

const and = (where: string[]) => where.map((w) => `AND ${w}`).join(" ");

export function dlqQueries(ctx: SqliteContext): DlqStore {
  const { db } = ctx;
  const get = db.prepare("SELECT * FROM dlq WHERE account_id = ? AND dlq_id = ?");
  const count = db.prepare("SELECT COUNT(*) AS n FROM dlq WHERE account_id = ?");
  const accounts = db.prepare("SELECT DISTINCT account_id FROM dlq");
  const deleteExpired = db.prepare(
    `DELETE FROM dlq WHERE seq IN (
       SELECT seq FROM dlq WHERE account_id = ? AND failed_at < ? ORDER BY seq LIMIT ?)`,
  );
  const deleteOldest = db.prepare(
    "DELETE FROM dlq WHERE seq IN (SELECT seq FROM dlq WHERE account_id = ? ORDER BY seq LIMIT ?)",
  );

  return {
    dlqList: async ({ accountId, filter, cursor, count: limit, order }) => {
      const { where, params } = dlqWhere(filter);
      const desc = order === "latestFirst";
      if (cursor !== undefined) {
        where.push(desc ? "seq < ?" : "seq > ?");
        params.push(Number(cursor));
      }
      const sql = `SELECT * FROM dlq WHERE account_id = ? ${and(where)} ORDER BY seq ${desc ? "DESC" : "ASC"} LIMIT ?`;
      const { page, cursor: next } = seqPage(db.prepare(sql).all(accountId, ...params, limit + 1) as DlqRow[], limit);
      const entries = page.map(dlqEntryFromRow);
      return next === undefined ? { entries } : { entries, cursor: next };
    },

    dlqGet: async ({ accountId, dlqId }) => {
      const row = get.get(accountId, dlqId) as DlqRow | undefined;
      return row ? dlqEntryFromRow(row) : undefined;
    },

    dlqDelete: ({ accountId, filter, count: limit, cursor }) =>
      ctx.write(() => {
        const { where, params } = dlqWhere(filter);
        if (cursor !== undefined) {
          where.push("seq > ?");
          params.push(Number(cursor));
        }
        if (limit === undefined) {
          return {
            deleted: db.prepare(`DELETE FROM dlq WHERE account_id = ? ${and(where)}`).run(accountId, ...params).changes,
          };
        }
        const seqs = db
          .prepare(`SELECT seq FROM dlq WHERE account_id = ? ${and(where)} ORDER BY seq LIMIT ?`)
          .pluck()
          .all(accountId, ...params, limit + 1) as number[];
        const doomed = seqs.slice(0, limit);
        let deleted = 0;
        if (doomed.length > 0) {
          deleted = db
            .prepare(`DELETE FROM dlq WHERE seq IN (${doomed.map(() => "?").join(", ")})`)
            .run(...doomed).changes;
        }
        const result: { deleted: number; cursor?: string } = { deleted };
        if (seqs.length > limit && doomed.length > 0) result.cursor = String(doomed[doomed.length - 1]);
        return result;
      }),

    dlqAccountIds: async () => accounts.pluck().all() as string[],

    dlqTrim: ({ accountId, before, maxSize, limit }) =>
      ctx.write(() => {
        let deleted = deleteExpired.run(accountId, before, limit).changes;
        const excess = (count.get(accountId) as { n: number }).n - maxSize;
        if (excess > 0 && deleted < limit)
          deleted += deleteOldest.run(accountId, Math.min(excess, limit - deleted)).changes;
        return deleted;
      }),
  };
}
