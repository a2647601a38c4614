import type { DlqFilter, DlqStore } from "../dlq-store.js";
import type { PgContext } from "./context.js";
import { andAll, filterSql, Params } from "./filters.js";
import { seqPage } from "../pages.js";
import { type DlqRow, dlqEntryFromRow } from "../rows-shared.js";

/**
 * The dead letter queue on PostgreSQL (mirrors src/store/sqlite/dlq.ts). Entries are written by `messageFinish`
 * (migration 001's `dlq` table); here they are read, deleted and trimmed. Every write is one statement that picks
 * its rows and deletes them atomically, so two nodes deleting or trimming at once never delete a row twice nor
 * more rows than asked: a row another transaction deleted first is skipped by the second (re-checked after its lock).
 */

/** WHERE terms of a DLQ filter, after `account_id = $1`; fromDate/toDate apply to the time the entry was written. */
export function dlqWhere(accountId: string, filter: DlqFilter): { params: Params; where: string } {
  const params = new Params();
  const account = `account_id = ${params.add(accountId)}`;
  const terms = filterSql(filter, { time: "failed_at", idColumn: "message_id" }, params);
  if (filter.dlqIds && filter.dlqIds.length > 0) terms.push(`dlq_id = ANY(${params.add(filter.dlqIds)}::text[])`);
  if (filter.responseStatus && filter.responseStatus.length > 0) {
    terms.push(`response_status = ANY(${params.add(filter.responseStatus)}::int[])`);
  }
  // A workflow step's run is in its spec (src/domain/workflow.ts WorkflowLink).
  const runOf = "(spec::jsonb #>> '{workflow,runId}')";
  if (filter.workflowRunId && filter.workflowRunId.length > 0) {
    terms.push(`${runOf} = ANY(${params.add(filter.workflowRunId)}::text[])`);
  }
  if (filter.workflowOnly) terms.push(`${runOf} IS NOT NULL`);
  return { params, where: `${account}${andAll(terms)}` };
}

const getSql = { name: "ferry_dlq_get", text: "SELECT * FROM dlq WHERE account_id = $1 AND dlq_id = $2" };
const accountsSql = { name: "ferry_dlq_accounts", text: "SELECT DISTINCT account_id FROM dlq" };
const deleteExpiredSql = {
  name: "ferry_dlq_trim_expired",
  text: `DELETE FROM dlq WHERE seq IN (
    SELECT seq FROM dlq WHERE account_id = $1 AND failed_at < $2 ORDER BY seq LIMIT $3)`,
};
/**
 * Deletes the oldest entries beyond `maxSize` (at most $3), counting in the same statement: two trimmers running at
 * once compute the same excess and pick the same oldest rows, so together they delete it once.
 */
const deleteOldestSql = {
  name: "ferry_dlq_trim_oldest",
  text: `DELETE FROM dlq WHERE seq IN (
    SELECT seq FROM dlq WHERE account_id = $1 ORDER BY seq
    LIMIT GREATEST(0, LEAST($3::int, (SELECT count(*) FROM dlq WHERE account_id = $1) - $2::int)))`,
};

export function dlqQueries(ctx: PgContext): DlqStore {
  return {
    dlqList: async ({ accountId, filter, cursor, count, order }) => {
      const { params, where } = dlqWhere(accountId, filter);
      const desc = order === "latestFirst";
      const after = cursor === undefined ? "" : ` AND seq ${desc ? "<" : ">"} ${params.add(Number(cursor))}`;
      const rows = await ctx.query<DlqRow & { seq: number }>(
        `SELECT * FROM dlq WHERE ${where}${after} ORDER BY seq ${desc ? "DESC" : "ASC"} LIMIT ${params.add(count + 1)}`,
        params.values,
      );
      const { page, cursor: next } = seqPage(rows, count);
      const entries = page.map(dlqEntryFromRow);
      return next === undefined ? { entries } : { entries, cursor: next };
    },

    dlqGet: async ({ accountId, dlqId }) => {
      const [row] = await ctx.query<DlqRow>(getSql, [accountId, dlqId]);
      return row ? dlqEntryFromRow(row) : undefined;
    },

    dlqDelete: ({ accountId, filter, count, cursor }) =>
      ctx.write(async (tx) => {
        const { params, where } = dlqWhere(accountId, filter);
        const after = cursor === undefined ? "" : ` AND seq > ${params.add(Number(cursor))}`;
        if (count === undefined) {
          return { deleted: await tx.execute(`DELETE FROM dlq WHERE ${where}${after}`, params.values) };
        }
        // One page, oldest first: the statement deletes the first `count` matches and says whether more match.
        const limit = params.add(count);
        const [row] = await tx.query<{ deleted: number; last: number | null; more: boolean }>(
          `WITH page AS (SELECT seq FROM dlq WHERE ${where}${after} ORDER BY seq LIMIT ${limit}),
             gone AS (DELETE FROM dlq WHERE seq IN (SELECT seq FROM page) RETURNING seq)
           SELECT (SELECT count(*)::int FROM gone) AS deleted, (SELECT max(seq) FROM page) AS last,
             EXISTS (SELECT 1 FROM dlq WHERE ${where}${after}
               AND seq > COALESCE((SELECT max(seq) FROM page), -1)) AS more`,
          params.values,
        );
        const result: { deleted: number; cursor?: string } = { deleted: row!.deleted };
        if (row!.more && row!.last !== null) result.cursor = String(row!.last);
        return result;
      }),

    dlqAccountIds: async () => (await ctx.query<{ account_id: string }>(accountsSql)).map((r) => r.account_id),

    dlqTrim: ({ accountId, before, maxSize, limit }) =>
      ctx.write(async (tx) => {
        let deleted = await tx.execute(deleteExpiredSql, [accountId, before, limit]);
        if (deleted < limit) deleted += await tx.execute(deleteOldestSql, [accountId, maxSize, limit - deleted]);
        return deleted;
      }),
  };
}
