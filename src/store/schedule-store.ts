import type { NewMessage } from "../domain/message.js";
import type { Schedule, ScheduleWithStates } from "../domain/schedule.js";

/** A schedule as created or overwritten: the store assigns the revision; the rest starts cleared. */
export type NewSchedule = Omit<Schedule, "revision" | "paused" | "lastRunAt" | "lastMessageIds" | "error">;

export type ScheduleUpsertResult = "created" | "replaced" | "quota_exceeded";

/**
 * The schedules capability of the store (issue #5). Every rule holds with several nodes on one database: ticks are
 * claimed with a conditional update on (next tick, revision) inside the transaction that inserts the tick's
 * messages, so a tick fires once whichever node, or restarted process, gets there first.
 * PostgreSQL notes: the claim is the same UPDATE (under READ COMMITTED a second writer waits for the row lock, then
 * re-checks the WHERE clause and matches nothing); the max_schedules count needs the account row locked
 * (`SELECT … FOR UPDATE`) first, which SQLite's single writer gives for free.
 */
export interface ScheduleStore {
  /**
   * Creates a schedule, or replaces every field of the account's schedule with the same id (fields not sent are
   * cleared, the schedule is unpaused, its history reset). A new one past `maxSchedules` is refused, counted in the
   * same transaction.
   */
  scheduleUpsert(p: { schedule: NewSchedule; maxSchedules: number }): Promise<ScheduleUpsertResult>;
  scheduleGet(p: { accountId: string; id: string }): Promise<ScheduleWithStates | undefined>;
  /** The account's schedules, oldest first. */
  scheduleList(p: { accountId: string }): Promise<ScheduleWithStates[]>;
  scheduleDelete(p: { accountId: string; id: string }): Promise<boolean>;
  /**
   * Pauses or resumes (idempotent). A resume passes `nextRunAt`, the first tick after now, so missed ticks are not
   * fired. False when the schedule does not exist.
   */
  scheduleSetPaused(p: { accountId: string; id: string; paused: boolean; nextRunAt?: number }): Promise<boolean>;
  /** Schedules whose stored next tick is at or before `now`, earliest first (paused ones too: their ticks pass). */
  scheduleListDue(p: { now: number; limit: number }): Promise<Schedule[]>;
  /**
   * Claims the tick `dueAt` of revision `revision` and, in the same transaction, inserts `messages` (with their
   * CREATED logs). The claim moves the stored next tick to `nextRunAt`; `firedAt` (the tick that published) and
   * `error` update the schedule's last-run fields. False, and nothing written, when the tick was already claimed
   * (another node, an earlier process) or the schedule changed or vanished meanwhile.
   */
  scheduleFire(p: {
    accountId: string;
    id: string;
    revision: string;
    dueAt: number;
    nextRunAt?: number;
    firedAt?: number;
    messages: NewMessage[];
    error?: string;
    now: number;
  }): Promise<boolean>;
}

// The schedule methods are part of the one Store interface (interface merging keeps store.ts untouched, so every
// capability adds its methods from its own file without editing a shared line).
