import { completeLogPage, logPageOf } from "../log-pages.js";
import type { Store } from "../store.js";
import type { PgContext } from "./context.js";
import { andAll, filterSql, Params } from "./filters.js";
import type { LogRow } from "./rows.js";

type LogQueries = Pick<Store, "logList">;

export function logQueries(ctx: PgContext): LogQueries {
  return {
    logList: async ({ accountId, filter, cursor, count, order }) => {
      const params = new Params();
      const where = filterSql(filter, { time: "time", idColumn: "message_id" }, params);
      const desc = order === "latestFirst";
      if (cursor !== undefined) where.push(`seq ${desc ? "<" : ">"} ${params.add(Number(cursor))}`);
      const rows = await ctx.query<LogRow>(
        `SELECT * FROM logs WHERE account_id = ${params.add(accountId)}${andAll(where)}
          ORDER BY seq ${desc ? "DESC" : "ASC"} LIMIT ${params.add(count + 1)}`,
        params.values,
      );
      const { page, needCreated: ids } = logPageOf(rows, count);
      const created =
        ids.length === 0
          ? undefined
          : await ctx.query<{ message_id: string; details: string }>(
              "SELECT message_id, details FROM logs WHERE state = 'CREATED' AND message_id = ANY($1::text[])",
              [ids],
            );
      return completeLogPage(page, created, rows.length > count);
    },
  };
}
