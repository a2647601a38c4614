import {
  armFilter,
  armSelect,
  createdOfRows,
  derivedArms,
  logsSelect,
  type UnionRow,
  unionToLogRow,
} from "../derived-log.js";
import { completeLogPage, logPageOf } from "../log-pages.js";
import type { LogFilter, Store } from "../store.js";
import type { SqliteContext } from "./context.js";
import { filterSql } from "./filters.js";

type LogQueries = Pick<Store, "logList">;

const NULLS = { text: "NULL", bytea: "NULL", int: "NULL" };

export function logQueries(ctx: SqliteContext): LogQueries {
  const { db } = ctx;
  const horizon = db.prepare("SELECT value FROM id_counters WHERE name = 'log_horizon'").pluck();

  return {
    /**
     * The `logs` rows and the entries the message rows derive (src/store/derived-log.ts) as one ordered union: each
     * part reads at most a page through its own index (logs_account, messages_account, messages_active_seq,
     * messages_finished_seq), and SQLite merges them.
     */
    logList: async ({ accountId, filter, cursor, count, order }) => {
      const dir = order === "latestFirst" ? "DESC" : "ASC";
      const parts: string[] = [];
      const params: unknown[] = [];
      // Entries past log retention are gone from `logs`; derived ones older than its last cutoff are left out.
      const since = horizon.get() as number;
      const part = (select: string, seq: string, f: LogFilter, time: string, idColumn: string, extra?: string) => {
        const { where, params: values } = filterSql(f, { time, idColumn });
        if (extra !== undefined) {
          where.unshift(extra);
          if (since > 0) {
            where.push(`${time} >= ?`);
            values.push(since);
          }
        }
        if (cursor !== undefined) {
          where.push(`${seq} ${dir === "DESC" ? "<" : ">"} ?`);
          values.push(Number(cursor));
        }
        parts.push(
          `SELECT * FROM (${select} WHERE account_id = ? ${where.map((w) => `AND ${w}`).join(" ")}
            ORDER BY ${seq} ${dir} LIMIT ?)`,
        );
        params.push(accountId, ...values, count + 1);
      };
      part(logsSelect(NULLS), "seq", filter, "time", "message_id");
      for (const arm of derivedArms(filter)) {
        part(armSelect(arm, NULLS), arm.seq, armFilter(filter), arm.time, "id", arm.present);
      }
      const sql = `${parts.join(" UNION ALL ")} ORDER BY seq ${dir} LIMIT ?`;
      const rows = (db.prepare(sql).all(...params, count + 1) as UnionRow[]).map(unionToLogRow);
      const { page, needCreated: ids } = logPageOf(rows, count);
      let created: { message_id: string; details: string }[] | undefined;
      if (ids.length > 0) {
        const marks = ids.map(() => "?").join(",");
        created = [
          ...(db
            .prepare(`SELECT message_id, details FROM logs WHERE state = 'CREATED' AND message_id IN (${marks})`)
            .all(...ids) as { message_id: string; details: string }[]),
          ...createdOfRows(
            db
              .prepare(
                `SELECT id AS message_id, spec, body FROM messages WHERE derived_log AND id IN (${marks})
                 AND created_at >= ?`,
              )
              .all(...ids, since) as { message_id: string; spec: string; body: Buffer | null }[],
          ),
        ];
      }
      return completeLogPage(page, created, rows.length > count);
    },
  };
}
