import type { LogDetails } from "../../domain/log.js";
import type { LogRecord, Store } from "../store.js";
import type { PgContext } from "./context.js";
import { andAll, filterSql, Params } from "./filters.js";
import { type LogRow, logFromRow } from "./rows.js";

type LogQueries = Pick<Store, "logList" | "usageAdd">;

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
      const page = rows.slice(0, count).map(logFromRow) as LogRecord[];
      // Each entry shows the message as published; that lives once, on its CREATED entry.
      const ids = [...new Set(page.filter((e) => e.state !== "CREATED").map((e) => e.messageId))];
      if (ids.length > 0) {
        const created = await ctx.query<{ message_id: string; details: string }>(
          "SELECT message_id, details FROM logs WHERE state = 'CREATED' AND message_id = ANY($1::text[])",
          [ids],
        );
        const byId = new Map(created.map((c) => [c.message_id, JSON.parse(c.details) as LogDetails]));
        for (const e of page) if (e.state !== "CREATED") e.created = byId.get(e.messageId);
      }
      const result: { logs: LogRecord[]; cursor?: string } = { logs: page };
      if (rows.length > count && page.length > 0) result.cursor = page[page.length - 1]!.seq;
      return result;
    },

    usageAdd: ({ accountId, now, metric, count, bytes }) =>
      ctx.write(async (tx) => tx.addUsage(accountId, now, metric, count, bytes)),
  };
}
