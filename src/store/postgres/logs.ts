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
import type { PgContext } from "./context.js";
import { andAll, filterSql, Params } from "./filters.js";

type LogQueries = Pick<Store, "logList">;

const NULLS = { text: "NULL::text", bytea: "NULL::bytea", int: "NULL::int4" };

export function logQueries(ctx: PgContext): LogQueries {
  return {
    /**
     * The `logs` rows and the entries the message rows derive (src/store/derived-log.ts) as one ordered union: each
     * part reads at most a page through its own index (logs_account, messages_account, messages_active_seq,
     * messages_finished_seq), and PostgreSQL merges them.
     */
    logList: async ({ accountId, filter, cursor, count, order }) => {
      const params = new Params();
      const dir = order === "latestFirst" ? "DESC" : "ASC";
      // Entries past log retention are gone from `logs`; derived ones older than its last cutoff are left out.
      const horizon = `(SELECT before FROM log_horizon)`;
      const limit = params.add(count + 1);
      const parts: string[] = [];
      const part = (select: string, seq: string, f: LogFilter, time: string, idColumn: string, extra?: string) => {
        const where = filterSql(f, { time, idColumn }, params);
        if (extra !== undefined) where.unshift(extra, `${time} >= ${horizon}`);
        if (cursor !== undefined) where.push(`${seq} ${dir === "DESC" ? "<" : ">"} ${params.add(Number(cursor))}`);
        parts.push(
          `(${select} WHERE account_id = ${params.add(accountId)}${andAll(where)}
            ORDER BY ${seq} ${dir} LIMIT ${limit})`,
        );
      };
      part(logsSelect(NULLS), "seq", filter, "time", "message_id");
      for (const arm of derivedArms(filter)) {
        part(armSelect(arm, NULLS), arm.seq, armFilter(filter), arm.time, "id", arm.present);
      }
      const rows = (
        await ctx.query<UnionRow>(
          `SELECT * FROM (${parts.join(" UNION ALL ")}) AS entries ORDER BY seq ${dir} LIMIT ${limit}`,
          params.values,
        )
      ).map(unionToLogRow);
      const { page, needCreated: ids } = logPageOf(rows, count);
      let created: { message_id: string; details: string }[] | undefined;
      if (ids.length > 0) {
        const [written, derived] = await Promise.all([
          ctx.query<{ message_id: string; details: string }>(
            "SELECT message_id, details FROM logs WHERE state = 'CREATED' AND message_id = ANY($1::text[])",
            [ids],
          ),
          ctx.query<{ message_id: string; spec: string; body: Buffer | null }>(
            `SELECT id AS message_id, spec, body FROM messages WHERE derived_log AND id = ANY($1::text[])
               AND created_at >= (SELECT before FROM log_horizon)`,
            [ids],
          ),
        ]);
        created = [...written, ...createdOfRows(derived)];
      }
      return completeLogPage(page, created, rows.length > count);
    },
  };
}
