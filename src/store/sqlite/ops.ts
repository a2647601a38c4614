import { dirname, join } from "node:path";
import { LIVE_ROW } from "./row-states.js";
import { fileURLToPath } from "node:url";
import { unappliedMigrationNames } from "../migration-files.js";
import { GAUGE_COUNT_CAP, messageGauges, type OpsStore } from "../ops-store.js";
import type { SqliteContext } from "./context.js";

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), "migrations");

type OpsQueries = Pick<OpsStore, "opsReadiness" | "opsGauges">;

/** A count that reads at most GAUGE_COUNT_CAP rows of `from` (a partial index does the filtering). */
const capped = (from: string) => `SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${from} LIMIT ${GAUGE_COUNT_CAP})`;

export function opsQueries(ctx: SqliteContext): OpsQueries {
  const { db } = ctx;
  const applied = db.prepare("SELECT name FROM schema_migrations");
  // messages_due covers CREATED and RETRY; split by state and by due time after the capped read.
  const dueStates = db.prepare(
    `SELECT state, due_at <= @now AS due, COUNT(*) AS n
     FROM (SELECT state, due_at FROM messages WHERE state IN ('CREATED', 'RETRY') LIMIT ${GAUGE_COUNT_CAP})
     GROUP BY state, due`,
  );
  const active = db.prepare(capped("messages WHERE state = 'ACTIVE'"));
  const waiting = db.prepare(
    `SELECT wait_reason AS reason, COUNT(*) AS n
     FROM (SELECT wait_reason FROM messages WHERE state = 'WAITING' LIMIT ${GAUGE_COUNT_CAP}) GROUP BY reason`,
  );
  const waitLists = db.prepare(
    `SELECT COUNT(*) AS n FROM (SELECT DISTINCT account_id, flow_key FROM
       (SELECT account_id, flow_key FROM messages WHERE state = 'WAITING' AND wait_reason = 'key' LIMIT ${GAUGE_COUNT_CAP}))`,
  );
  const queued = db.prepare(capped("messages WHERE state = 'QUEUED'"));
  const queueLag = db.prepare(capped(`messages WHERE queue_name IS NOT NULL AND ${LIVE_ROW} AND state <> 'HELD'`));
  const dlq = db.prepare(capped("dlq"));
  const oldestDue = db.prepare(
    "SELECT due_at FROM messages WHERE state IN ('CREATED', 'RETRY') AND due_at <= ? ORDER BY due_at LIMIT 1",
  );
  const n = (statement: { get(...args: unknown[]): unknown }) => (statement.get() as { n: number }).n;

  return {
    opsReadiness: async () => {
      const names = (applied.all() as { name: string }[]).map((r) => r.name);
      return { pendingMigrations: unappliedMigrationNames(migrationsDir, names) };
    },

    opsGauges: async ({ now }) => {
      const messages = messageGauges({
        dueStates: dueStates.all({ now }) as { state: string; due: number; n: number }[],
        waiting: waiting.all() as { reason: string | null; n: number }[],
        active: n(active),
        queued: n(queued),
      });
      const oldest = oldestDue.get(now) as { due_at: number } | undefined;
      return {
        messages,
        dlqSize: n(dlq),
        queueLag: n(queueLag),
        flowControlWaitLists: n(waitLists),
        oldestDueAt: oldest?.due_at,
      };
    },
  };
}
