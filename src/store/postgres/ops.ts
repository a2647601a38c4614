import { LIVE_ROW_SQL } from "../derived-log.js";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { unappliedMigrationNames } from "../migration-files.js";
import { GAUGE_COUNT_CAP, messageGauges, type OpsStore } from "../ops-store.js";
import type { PgContext } from "./context.js";

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), "migrations");

type OpsQueries = Pick<OpsStore, "opsReadiness" | "opsGauges">;

/** A count that reads at most GAUGE_COUNT_CAP rows of `from` (a partial index does the filtering). */
const capped = (from: string) => `(SELECT COUNT(*)::int FROM (SELECT 1 FROM ${from} LIMIT ${GAUGE_COUNT_CAP}) c)`;

/**
 * Every gauge in one statement (one round trip, one snapshot). messages_due covers CREATED and RETRY, split by
 * state and due time after the capped read; the other states have partial indexes of their own.
 */
const gaugesSql = {
  name: "ferry_ops_gauges",
  text: `SELECT
    (SELECT COALESCE(json_agg(json_build_object('state', state, 'due', due, 'n', n)), '[]'::json) FROM
      (SELECT state, due_at <= $1::int8 AS due, COUNT(*)::int AS n
       FROM (SELECT state, due_at FROM messages WHERE state IN ('CREATED', 'RETRY') LIMIT ${GAUGE_COUNT_CAP}) d
       GROUP BY state, due) s) AS due_states,
    ${capped("messages WHERE state = 'ACTIVE'")} AS active,
    (SELECT COALESCE(json_agg(json_build_object('reason', reason, 'n', n)), '[]'::json) FROM
      (SELECT wait_reason AS reason, COUNT(*)::int AS n
       FROM (SELECT wait_reason FROM messages WHERE state = 'WAITING' LIMIT ${GAUGE_COUNT_CAP}) w
       GROUP BY wait_reason) s) AS waiting,
    (SELECT COUNT(*)::int FROM (SELECT DISTINCT account_id, flow_key FROM
       (SELECT account_id, flow_key FROM messages WHERE state = 'WAITING' AND wait_reason = 'key'
        LIMIT ${GAUGE_COUNT_CAP}) k) d) AS wait_lists,
    ${capped("messages WHERE state = 'QUEUED'")} AS queued,
    ${capped(`messages WHERE queue_name IS NOT NULL AND ${LIVE_ROW_SQL} AND state <> 'HELD'`)} AS queue_lag,
    ${capped("dlq")} AS dlq,
    (SELECT due_at FROM messages WHERE state IN ('CREATED', 'RETRY') AND due_at <= $1::int8
     ORDER BY due_at LIMIT 1) AS oldest_due`,
};

interface GaugeRow {
  due_states: { state: string; due: boolean; n: number }[];
  active: number;
  waiting: { reason: string | null; n: number }[];
  wait_lists: number;
  queued: number;
  queue_lag: number;
  dlq: number;
  oldest_due: string | number | null;
}

export function opsQueries(ctx: PgContext): OpsQueries {
  return {
    opsReadiness: async () => {
      const rows = await ctx.query<{ name: string }>("SELECT name FROM schema_migrations");
      return { pendingMigrations: unappliedMigrationNames(migrationsDir, rows.map((r) => r.name)) };
    },

    opsGauges: async ({ now }) => {
      const row = (await ctx.query<GaugeRow>(gaugesSql, [now]))[0]!;
      const messages = messageGauges({
        dueStates: row.due_states,
        waiting: row.waiting,
        active: row.active,
        queued: row.queued,
      });
      return {
        messages,
        dlqSize: row.dlq,
        queueLag: row.queue_lag,
        flowControlWaitLists: row.wait_lists,
        oldestDueAt: row.oldest_due === null ? undefined : Number(row.oldest_due),
      };
    },
  };
}
