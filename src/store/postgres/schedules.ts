import { ulid } from "../../domain/ids.js";
import { LIVE_ROW_SQL } from "../derived-log.js";
import {
  type ScheduleMessageState,
  type ScheduleWithStates,
  scheduleMessageState,
} from "../../domain/schedule.js";
import { type ScheduleRow, scheduleFromRow } from "../rows-shared.js";
import type { ScheduleStore } from "../schedule-store.js";
import type { PgContext } from "./context.js";
import { messageInserter } from "./messages.js";

/**
 * The account row is the lock behind max_schedules: every create or overwrite takes it first (FOR NO KEY UPDATE:
 * exclusive against itself and UPDATEs of the account, not against foreign-key checks), so two nodes creating
 * schedules for one account count one after the other. Lock order everywhere here: account, then schedule row.
 */
const lockAccountSql = {
  name: "ferry_schedule_lock_account",
  text: "SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE",
};
/** Locks the schedule being overwritten, so a concurrent delete cannot turn the overwrite into an uncounted create. */
const lockExistingSql = {
  name: "ferry_schedule_lock_existing",
  text: "SELECT 1 FROM schedules WHERE account_id = $1 AND id = $2 FOR UPDATE",
};
const countSql = {
  name: "ferry_schedule_count",
  text: "SELECT COUNT(*)::int AS n FROM schedules WHERE account_id = $1",
};
// An overwrite replaces every field and starts a fresh history (unpaused, no last run).
const upsertSql = {
  name: "ferry_schedule_upsert",
  text: `INSERT INTO schedules (account_id, id, revision, destination, cron, spec, body, delay_ms, queue_name,
      caller_ip, paused, created_at, next_run_at, last_run_at, last_message_ids, error)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, FALSE, $11, $12, NULL, '[]', NULL)
    ON CONFLICT (account_id, id) DO UPDATE SET revision = excluded.revision, destination = excluded.destination,
      cron = excluded.cron, spec = excluded.spec, body = excluded.body, delay_ms = excluded.delay_ms,
      queue_name = excluded.queue_name, caller_ip = excluded.caller_ip, paused = FALSE,
      created_at = excluded.created_at, next_run_at = excluded.next_run_at, last_run_at = NULL,
      last_message_ids = '[]', error = NULL`,
};
/**
 * Pause and resume are one atomic statement each: true when the schedule exists, and a no-op (same revision, same
 * tick) on a schedule already in the asked state, so resuming an active schedule never moves its tick.
 */
const pauseSql = {
  name: "ferry_schedule_pause",
  text: `UPDATE schedules SET revision = CASE WHEN paused THEN revision ELSE $3 END, paused = TRUE
    WHERE account_id = $1 AND id = $2 RETURNING id`,
};
const resumeSql = {
  name: "ferry_schedule_resume",
  text: `UPDATE schedules SET revision = CASE WHEN paused THEN $3 ELSE revision END,
      next_run_at = CASE WHEN paused THEN $4::bigint ELSE next_run_at END, paused = FALSE
    WHERE account_id = $1 AND id = $2 RETURNING id`,
};
const dueSql = {
  name: "ferry_schedules_due",
  text: `SELECT * FROM schedules WHERE next_run_at IS NOT NULL AND next_run_at <= $1
    ORDER BY next_run_at LIMIT $2`,
};
/**
 * The tick claim, a compare-and-set on (next tick, revision): only the first writer of this tick of this revision
 * changes the row; every later one (another node, a restarted process) matches nothing. The row is taken with
 * SKIP LOCKED: a node never waits for another node's claim (nor deadlocks with it when group commit puts several
 * claims in one transaction, in whatever order). A skipped row is one being claimed, paused, overwritten or deleted
 * right now; if that transaction rolls back instead, the tick is still stored as due and the next pass claims it.
 */
const claimSql = {
  name: "ferry_schedule_claim",
  text: `UPDATE schedules SET next_run_at = $5::bigint,
      last_run_at = CASE WHEN $6::bigint IS NULL THEN last_run_at ELSE $6::bigint END,
      last_message_ids = CASE WHEN $6::bigint IS NULL THEN last_message_ids ELSE $7 END,
      error = CASE WHEN $6::bigint IS NULL THEN error ELSE $8::text END
    WHERE account_id = $1 AND id = $2 AND next_run_at = $3 AND revision = $4
      AND (account_id, id) IN (
        SELECT account_id, id FROM schedules
        WHERE account_id = $1 AND id = $2 AND next_run_at = $3 AND revision = $4
        FOR UPDATE SKIP LOCKED)
    RETURNING id`,
};
/**
 * The state of each message of the last ticks, in one statement (one snapshot): its live state, if any, and how it
 * ended: its kept row's outcome, or for a row that left the table its final log entry (the newest DELIVERED, FAILED or
 * CANCELED one).
 */
const messageStatesSql = {
  name: "ferry_schedule_message_states",
  text: `SELECT ids.id, CASE WHEN m.${LIVE_ROW_SQL} THEN m.state END AS live,
      COALESCE(m.outcome, (SELECT l.state FROM logs l WHERE l.message_id = ids.id
        AND l.state IN ('DELIVERED', 'FAILED', 'CANCELED') ORDER BY l.seq DESC LIMIT 1)) AS final
    FROM unnest($1::text[]) AS ids(id) LEFT JOIN messages m ON m.id = ids.id`,
};

export function scheduleQueries(ctx: PgContext): ScheduleStore {
  const insertMessages = messageInserter(ctx);

  const withStates = async (rows: ScheduleRow[]): Promise<ScheduleWithStates[]> => {
    const schedules = rows.map(scheduleFromRow);
    const ids = schedules.flatMap((s) => s.lastMessageIds);
    const states = new Map<string, { live: string | null; final: string | null }>();
    if (ids.length > 0) {
      const found = await ctx.query<{ id: string; live: string | null; final: string | null }>(messageStatesSql, [
        ids,
      ]);
      for (const r of found) states.set(r.id, r);
    }
    return schedules.map((schedule) => {
      const lastStates: Record<string, ScheduleMessageState> = {};
      for (const id of schedule.lastMessageIds) {
        const s = states.get(id);
        // A HELD row is finished and only keeps its queue slot: its log tells how it ended.
        const live = s !== undefined && s.live !== null && s.live !== "HELD";
        const state = scheduleMessageState(live, s?.final ?? undefined);
        if (state !== undefined) lastStates[id] = state;
      }
      return { ...schedule, lastStates };
    });
  };

  return {
    scheduleUpsert: ({ schedule: s, maxSchedules }) =>
      ctx.write(async (tx) => {
        await tx.query(lockAccountSql, [s.accountId]);
        const replacing = (await tx.query(lockExistingSql, [s.accountId, s.id])).length > 0;
        if (!replacing) {
          const [count] = await tx.query<{ n: number }>(countSql, [s.accountId]);
          if (count!.n >= maxSchedules) return "quota_exceeded";
        }
        await tx.query(upsertSql, [
          s.accountId,
          s.id,
          ulid(),
          s.destination,
          s.cron,
          JSON.stringify(s.spec),
          s.body ?? null,
          s.delayMs,
          s.queueName ?? null,
          s.callerIp ?? null,
          s.createdAt,
          s.nextRunAt ?? null,
        ]);
        return replacing ? "replaced" : "created";
      }),

    scheduleGet: async ({ accountId, id }) => {
      const rows = await ctx.query<ScheduleRow>(
        { name: "ferry_schedule_get", text: "SELECT * FROM schedules WHERE account_id = $1 AND id = $2" },
        [accountId, id],
      );
      return (await withStates(rows))[0];
    },

    // COLLATE "C": ties ordered by bytes, as SQLite does, whatever the database's collation.
    scheduleList: async ({ accountId }) =>
      withStates(
        await ctx.query<ScheduleRow>(
          {
            name: "ferry_schedule_list",
            text: `SELECT * FROM schedules WHERE account_id = $1 ORDER BY created_at, id COLLATE "C"`,
          },
          [accountId],
        ),
      ),

    scheduleDelete: ({ accountId, id }) =>
      ctx.write(
        async (tx) =>
          (await tx.execute(
            { name: "ferry_schedule_delete", text: "DELETE FROM schedules WHERE account_id = $1 AND id = $2" },
            [accountId, id],
          )) > 0,
      ),

    scheduleSetPaused: ({ accountId, id, paused, nextRunAt }) =>
      ctx.write(async (tx) => {
        const rows = paused
          ? await tx.query(pauseSql, [accountId, id, ulid()])
          : await tx.query(resumeSql, [accountId, id, ulid(), nextRunAt ?? null]);
        return rows.length > 0;
      }),

    scheduleListDue: async ({ now, limit }) =>
      (await ctx.query<ScheduleRow>(dueSql, [now, limit])).map(scheduleFromRow),

    scheduleFire: (p) =>
      ctx.write(async (tx) => {
        const claimed = await tx.query(claimSql, [
          p.accountId,
          p.id,
          p.dueAt,
          p.revision,
          p.nextRunAt ?? null,
          p.firedAt ?? null,
          JSON.stringify(p.messages.map((m) => m.id)),
          p.error ?? null,
        ]);
        if (claimed.length === 0) return false;
        // Same transaction as the claim: the tick and its messages commit together or not at all.
        await insertMessages(
          tx,
          p.messages.map((message) => ({ message })),
          p.now,
          0,
        );
        return true;
      }),
  };
}
