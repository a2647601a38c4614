import type { LogDetails } from "../../domain/log.js";
import type { LogRecord, Store } from "../store.js";
import type { SqliteContext } from "./context.js";
import { filterSql } from "./filters.js";
import { type LogRow, logFromRow } from "./rows.js";

type LogQueries = Pick<Store, "logList" | "usageAdd">;

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
      const page = rows.slice(0, count).map(logFromRow) as LogRecord[];
      // Each entry shows the message as published; that lives once, on its CREATED entry.
      const ids = [...new Set(page.filter((e) => e.state !== "CREATED").map((e) => e.messageId))];
      if (ids.length > 0) {
        const created = db
          .prepare(
            `SELECT message_id, details FROM logs WHERE state = 'CREATED' AND message_id IN (${ids.map(() => "?").join(",")})`,
          )
          .all(...ids) as { message_id: string; details: string }[];
        const byId = new Map(created.map((c) => [c.message_id, JSON.parse(c.details) as LogDetails]));
        for (const e of page) if (e.state !== "CREATED") e.created = byId.get(e.messageId);
      }
      const result: { logs: LogRecord[]; cursor?: string } = { logs: page };
      if (rows.length > count && page.length > 0) result.cursor = page[page.length - 1]!.seq;
      return result;
    },

    usageAdd: ({ accountId, now, metric, count, bytes }) =>
      ctx.write(() => ctx.addUsage(accountId, now, metric, count, bytes)),
  };
}
