import { ulid } from "../../domain/ids.js";
import { LIVE_ROW } from "./row-states.js";
import {
  type ScheduleMessageState,
  type ScheduleWithStates,
  scheduleMessageState,
} from "../../domain/schedule.js";
import { type ScheduleRow, scheduleFromRow } from "../rows-shared.js";
import type { ScheduleStore } from "../schedule-store.js";
import type { SqliteContext } from "./context.js";
import { messageInserter } from "./messages.js";

export function scheduleQueries(ctx: SqliteContext): ScheduleStore {
  const { db } = ctx;
  const insertMessages = messageInserter(ctx);
  const get = db.prepare("SELECT * FROM schedules WHERE account_id = ? AND id = ?");
  const list = db.prepare("SELECT * FROM schedules WHERE account_id = ? ORDER BY created_at, id");
  const count = db.prepare("SELECT COUNT(*) AS n FROM schedules WHERE account_id = ?");
  const exists = db.prepare("SELECT 1 FROM schedules WHERE account_id = ? AND id = ?");
  // An overwrite replaces every field and starts a fresh history (unpaused, no last run).
  const upsert = db.prepare(
    `INSERT INTO schedules (account_id, id, revision, destination, cron, spec, body, delay_ms, queue_name, caller_ip,
       paused, created_at, next_run_at, last_run_at, last_message_ids, error)
     VALUES (@account_id, @id, @revision, @destination, @cron, @spec, @body, @delay_ms, @queue_name, @caller_ip,
       0, @created_at, @next_run_at, NULL, '[]', NULL)
     ON CONFLICT (account_id, id) DO UPDATE SET revision = excluded.revision, destination = excluded.destination,
       cron = excluded.cron, spec = excluded.spec, body = excluded.body, delay_ms = excluded.delay_ms,
       queue_name = excluded.queue_name, caller_ip = excluded.caller_ip, paused = 0, created_at = excluded.created_at,
       next_run_at = excluded.next_run_at, last_run_at = NULL, last_message_ids = '[]', error = NULL`,
  );
  const remove = db.prepare("DELETE FROM schedules WHERE account_id = ? AND id = ?");
  // Both are no-ops on a schedule already in the asked state: resuming an active schedule must not move its tick.
  const pause = db.prepare(
    "UPDATE schedules SET paused = 1, revision = ? WHERE account_id = ? AND id = ? AND paused = 0",
  );
  const resume = db.prepare(
    "UPDATE schedules SET paused = 0, revision = ?, next_run_at = ? WHERE account_id = ? AND id = ? AND paused = 1",
  );
  const due = db.prepare(
    "SELECT * FROM schedules WHERE next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at LIMIT ?",
  );
  // The claim: only the first writer of this (tick, revision) changes the row; every later one matches nothing.
  const claim = db.prepare(
    `UPDATE schedules SET next_run_at = @nextRunAt,
       last_run_at = CASE WHEN @firedAt IS NULL THEN last_run_at ELSE @firedAt END,
       last_message_ids = CASE WHEN @firedAt IS NULL THEN last_message_ids ELSE @messageIds END,
       error = CASE WHEN @firedAt IS NULL THEN error ELSE @error END
     WHERE account_id = @accountId AND id = @id AND next_run_at = @dueAt AND revision = @revision`,
  );
  // A row that ended and is kept (docs/states.md "The message row") holds its outcome; older rows' ends are logged.
  const liveMessage = db.prepare(
    `SELECT CASE WHEN ${LIVE_ROW} THEN state END AS state, outcome FROM messages WHERE id = ?`,
  );
  const finalLog = db.prepare(
    `SELECT state FROM logs WHERE message_id = ? AND state IN ('DELIVERED', 'FAILED', 'CANCELED')
     ORDER BY seq DESC LIMIT 1`,
  );

  const withStates = (row: ScheduleRow): ScheduleWithStates => {
    const schedule = scheduleFromRow(row);
    const lastStates: Record<string, ScheduleMessageState> = {};
    for (const id of schedule.lastMessageIds) {
      const row = liveMessage.get(id) as { state: string | null; outcome: string | null } | undefined;
      // A HELD row is finished and only keeps its queue slot: its outcome, or else its log, tells how it ended.
      const live = row !== undefined && row.state !== null && row.state !== "HELD";
      const final = live
        ? undefined
        : (row?.outcome ?? (finalLog.get(id) as { state: string } | undefined)?.state ?? undefined);
      const state = scheduleMessageState(live, final);
      if (state !== undefined) lastStates[id] = state;
    }
    return { ...schedule, lastStates };
  };

  return {
    scheduleUpsert: ({ schedule: s, maxSchedules }) =>
      ctx.write(() => {
        const replacing = exists.get(s.accountId, s.id) !== undefined;
        if (!replacing && (count.get(s.accountId) as { n: number }).n >= maxSchedules) return "quota_exceeded";
        upsert.run({
          account_id: s.accountId,
          id: s.id,
          revision: ulid(),
          destination: s.destination,
          cron: s.cron,
          spec: JSON.stringify(s.spec),
          body: s.body ?? null,
          delay_ms: s.delayMs,
          queue_name: s.queueName ?? null,
          caller_ip: s.callerIp ?? null,
          created_at: s.createdAt,
          next_run_at: s.nextRunAt ?? null,
        });
        return replacing ? "replaced" : "created";
      }),

    scheduleGet: async ({ accountId, id }) => {
      const row = get.get(accountId, id) as ScheduleRow | undefined;
      return row ? withStates(row) : undefined;
    },

    scheduleList: async ({ accountId }) => (list.all(accountId) as ScheduleRow[]).map(withStates),

    scheduleDelete: ({ accountId, id }) => ctx.write(() => remove.run(accountId, id).changes > 0),

    scheduleSetPaused: ({ accountId, id, paused, nextRunAt }) =>
      ctx.write(() => {
        if (exists.get(accountId, id) === undefined) return false;
        if (paused) pause.run(ulid(), accountId, id);
        else resume.run(ulid(), nextRunAt ?? null, accountId, id);
        return true;
      }),

    scheduleListDue: async ({ now, limit }) => (due.all(now, limit) as ScheduleRow[]).map(scheduleFromRow),

    scheduleFire: (p) =>
      ctx.write(() => {
        const claimed = claim.run({
          accountId: p.accountId,
          id: p.id,
          revision: p.revision,
          dueAt: p.dueAt,
          nextRunAt: p.nextRunAt ?? null,
          firedAt: p.firedAt ?? null,
          messageIds: JSON.stringify(p.messages.map((m) => m.id)),
          error: p.error ?? null,
        });
        if (claimed.changes === 0) return false;
        insertMessages(
          p.messages.map((message) => ({ message })),
          p.now,
          0,
        );
        return true;
      }),
  };
}
