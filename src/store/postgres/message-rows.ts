import { MESSAGE_ROW_COLUMNS, type MessageRowRow, type MessageRowStore, messageRowPage } from "../message-row-store.js";
import type { PgContext } from "./context.js";
import { andAll, filterSql, Params } from "./filters.js";

/** One row per message (src/store/message-row-store.ts), by arrival through `messages_account`. */
export function messageRowQueries(ctx: PgContext): MessageRowStore {
  return {
    messageRowList: async ({ accountId, filter, cursor, count, order }) => {
      const params = new Params();
      const where = filterSql(filter, { time: "created_at", idColumn: "id" }, params);
      const desc = order === "latestFirst";
      if (cursor !== undefined) where.push(`seq ${desc ? "<" : ">"} ${params.add(Number(cursor))}`);
      const rows = await ctx.query<MessageRowRow>(
        `SELECT ${MESSAGE_ROW_COLUMNS}, octet_length(body) AS body_size FROM messages
          WHERE account_id = ${params.add(accountId)}${andAll(where)}
          ORDER BY seq ${desc ? "DESC" : "ASC"} LIMIT ${params.add(count + 1)}`,
        params.values,
      );
      return messageRowPage(rows, count);
    },
  };
}
