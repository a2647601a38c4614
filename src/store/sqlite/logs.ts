import { completeLogPage, logPageOf } from "../log-pages.js";
import type { Store } from "../store.js";
import type { SqliteContext } from "./context.js";
import { filterSql } from "./filters.js";
import type { LogRow } from "./rows.js";

type LogQueries = Pick<Store, "logList">;

export function logQueries(ctx: SqliteContext): LogQueries {
  const { db } = ctx;

  return {
    logList: async ({ accountId, filter, cursor, count, order }) => {
      const { where, params } = filterSql(filter, { time: "time", idColumn: "message_id" });
      const desc = order === "latestFirst";
      if (cursor !== undefined) {
        where.push(desc ? "seq < ?" : "seq > ?");
        params.push(Number(cursor));
      }
      const sql = `SELECT * FROM logs WHERE account_id = ? ${where.map((w) => `AND ${w}`).join(" ")}
        ORDER BY seq ${desc ? "DESC" : "ASC"} LIMIT ?`;
      const rows = db.prepare(sql).all(accountId, ...params, count + 1) as LogRow[];
      const { page, needCreated: ids } = logPageOf(rows, count);
      const created =
        ids.length === 0
          ? undefined
          : (db
              .prepare(
                `SELECT message_id, details FROM logs WHERE state = 'CREATED'
                 AND message_id IN (${ids.map(() => "?").join(",")})`,
              )
              .all(...ids) as { message_id: string; details: string }[]);
      return completeLogPage(page, created, rows.length > count);
    },
  };
}
