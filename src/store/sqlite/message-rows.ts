import { MESSAGE_ROW_COLUMNS, type MessageRowRow, type MessageRowStore, messageRowPage } from "../message-row-store.js";
import type { SqliteContext } from "./context.js";
import { filterSql } from "./filters.js";

/** One row per message (src/store/message-row-store.ts), by arrival through `messages_account`. */
export function messageRowQueries(ctx: SqliteContext): MessageRowStore {
  const { db } = ctx;
  return {
    messageRowList: async ({ accountId, filter, cursor, count, order }) => {
      const { where, params } = filterSql(filter, { time: "created_at", idColumn: "id" });
      const desc = order === "latestFirst";
      if (cursor !== undefined) {
        where.push(desc ? "seq < ?" : "seq > ?");
        params.push(Number(cursor));
      }
      const rows = db
        .prepare(
          `SELECT ${MESSAGE_ROW_COLUMNS}, length(body) AS body_size FROM messages WHERE account_id = ?
           ${where.map((w) => `AND ${w}`).join(" ")} ORDER BY seq ${desc ? "DESC" : "ASC"} LIMIT ?`,
        )
        .all(accountId, ...params, count + 1) as MessageRowRow[];
      return messageRowPage(rows, count);
    },
  };
}
