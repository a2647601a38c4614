import { invalidField, quoted } from "../errors.js";
import { type CronExpression, nextTickAfter } from "./cron.js";
import type { MessageSpec } from "./message.js";

/**
 * A schedule (docs/schedules.md): a publish configuration that a cron expression triggers. Each tick
 * publishes one ordinary message per target carrying `scheduleId`.
 */
export interface Schedule {
  id: string;
  accountId: string;
  /** A full http(s) URL (its query string included) or a URL-group name. */
  destination: string;
  /** The trimmed expression, `CRON_TZ=` prefix included. */
  cron: string;
  /** The parsed publish configuration every triggered message gets. */
  spec: MessageSpec;
  body?: Buffer;
  /** Svc-Delay: each triggered message is created at its tick and delivered this much later. */
  delayMs: number;
  /** Svc-Queue-Name: triggered messages are enqueued there. */
  queueName?: string;
  /** IP of whoever created the schedule; destinations receive it as the caller-IP header. */
  callerIp?: string;
  paused: boolean;
  createdAt: number;
  /** The next tick (unix ms); undefined when the expression never fires again. */
  nextRunAt?: number;
  /** The last tick that fired. */
  lastRunAt?: number;
  /** Messages the last tick published. */
  lastMessageIds: string[];
  /** Why the last tick published nothing (its URL group was gone, for instance); cleared by the next success. */
  error?: string;
  /**
   * A fresh value on every create, overwrite, pause and resume. A tick is claimed only for the revision it was
   * planned from, so a tick planned from a configuration that was just replaced (or deleted and re-created under the
   * same id) never fires with the old one.
   */
  revision: string;
}

/** What `lastScheduleStates` shows per message of the last tick (docs/schedules.md "Schedule record"). */
export type ScheduleMessageState = "IN_PROGRESS" | "SUCCESS" | "FAIL";

export interface ScheduleWithStates extends Schedule {
  lastStates: Record<string, ScheduleMessageState>;
}

/**
 * Public state of a triggered message: a live row (not just holding its queue slot) means in progress; otherwise
 * how it ended decides (its kept row's outcome, or for rows that left the table its final log entry). Unknown
 * (trimmed by retention) gives undefined.
 */
export function scheduleMessageState(
  live: boolean,
  finalLogState: string | undefined,
): ScheduleMessageState | undefined {
  if (live) return "IN_PROGRESS";
  if (finalLogState === "DELIVERED") return "SUCCESS";
  if (finalLogState === "FAILED" || finalLogState === "CANCELED") return "FAIL";
  return undefined;
}

/** Custom schedule ids: alphanumerics, `-`, `_`, `.` (docs/schedules.md). */
const SCHEDULE_ID = /^[A-Za-z0-9._-]+$/;
const MAX_SCHEDULE_ID_LENGTH = 256;

export function parseScheduleId(raw: string, field: string): string {
  const id = raw.trim();
  if (id === "") throw invalidField(field, "must not be empty");
  if (id.length > MAX_SCHEDULE_ID_LENGTH)
    throw invalidField(field, `must be at most ${MAX_SCHEDULE_ID_LENGTH} characters`);
  if (!SCHEDULE_ID.test(id)) throw invalidField(field, `${quoted(raw)} may contain only letters, digits, "-", "_" and "."`);
  return id;
}

/**
 * A tick missed while no node ran (a restart, an outage) still fires once when it is at most this old; older
 * missed ticks are skipped, never replayed. (Default: 60 s, the reference's "registration can take up to 60 s")
 */
export const MISSED_TICK_GRACE_MS = 60_000;

export interface TickPlan {
  /** The tick to publish now, if any. */
  fireTick?: number;
  /** The stored next tick after this step: always later than `now` (undefined: the expression never fires again). */
  nextRunAt?: number;
}

/**
 * Decides what a due schedule (stored next tick `dueAt` <= `now`) does now: fire once for the latest tick that is
 * at most MISSED_TICK_GRACE_MS old, skip every older one, and move the stored tick past `now`. A paused schedule's
 * ticks pass without firing (docs/schedules.md "Paused schedules"). Pure: `now` is given.
 */
export function planDueTick(cron: CronExpression, dueAt: number, now: number, paused: boolean): TickPlan {
  const windowStart = now - MISSED_TICK_GRACE_MS;
  let tick: number | undefined = dueAt >= windowStart ? dueAt : nextTickAfter(cron, windowStart - 1);
  let latest: number | undefined;
  // Cron has minute resolution, so a 60 s window holds at most two ticks; the bound only guards the loop.
  for (let i = 0; tick !== undefined && tick <= now && i < 1000; i++) {
    latest = tick;
    tick = nextTickAfter(cron, tick);
  }
  if (tick !== undefined && tick <= now) tick = nextTickAfter(cron, now);
  const plan: TickPlan = {};
  if (tick !== undefined) plan.nextRunAt = tick;
  if (latest !== undefined && !paused) plan.fireTick = latest;
  return plan;
}
