import { newMessageId } from "../../src/domain/ids.js";
import type { NewMessage } from "../../src/domain/message.js";
import type { NewSchedule } from "../../src/store/schedule-store.js";
import { aMessage, anAccount } from "./factories.js";

/** What the schedule store tests share (schedules.test.ts: every adapter; schedules-postgres.test.ts: several nodes). */
export const T = Date.UTC(2030, 0, 7, 12, 0, 0);
export const MIN = 60_000;

export const account = (id: string) => anAccount(id, { createdAt: T });

export function schedule(id: string, patch: Partial<NewSchedule> = {}): NewSchedule {
  return {
    id,
    accountId: "acc",
    destination: "http://127.0.0.1:9/x",
    cron: "* * * * *",
    spec: { method: "POST", headers: {}, retries: 3 },
    delayMs: 0,
    callerIp: "10.0.0.1",
    createdAt: T,
    nextRunAt: T + MIN,
    ...patch,
  };
}

export const message = (scheduleId: string, dueAt = T + MIN): NewMessage =>
  aMessage("acc", { id: newMessageId(), at: T + MIN, dueAt, scheduleId, spec: { method: "POST", headers: {}, retries: 3 } });

/** The claim of tick `dueAt` (default: the first minute) as the scheduler plans it from `revision`. */
export function tick(id: string, revision: string, dueAt = T + MIN) {
  return { accountId: "acc", id, revision, dueAt, nextRunAt: dueAt + MIN, firedAt: dueAt, now: dueAt };
}
