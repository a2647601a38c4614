import { type OptionRecordFields, optionRecordFields } from "../../domain/message-options.js";
import type { ScheduleWithStates } from "../../domain/schedule.js";
import type { Schedule } from "../schemas/schedules.js";
import { bodyFields } from "./message-view.js";
import { putPresent as put } from "./put-present.js";

/** Every option field the table writes has a place in the schedule's shape (or the serializer would drop it). */
const optionFieldsNamed: [Exclude<keyof OptionRecordFields, "maxRetries" | keyof Schedule>] extends [never] ? true : false =
  true;
void optionFieldsNamed;

/**
 * The Schedule record (docs/schedules.md "Schedule record"). Required keys are always present (`scheduleId`, `cron`,
 * `createdAt`, `destination`, `method`, `isPaused`, and `retries`, which the Python parser needs); every other key is
 * omitted when zero-valued, as the reference service does (a schedule overwritten without a body has no `body` key).
 * The options' fields come from their descriptors (src/domain/message-options.ts); the schedule calls `maxRetries`
 * `retries`.
 */
export function scheduleRecord(s: ScheduleWithStates): Schedule {
  const { maxRetries, ...options } = optionRecordFields(s.spec);
  const out: Schedule = {
    scheduleId: s.id,
    cron: s.cron,
    createdAt: s.createdAt,
    destination: s.destination,
    isPaused: s.paused,
    retries: maxRetries,
    ...options,
    ...bodyFields(s.body, s.spec.redact),
  };
  if (s.delayMs > 0) out.delay = Math.floor(s.delayMs / 1000);
  // The Python and JS parsers read callerIP; the OpenAPI file shows callerIp: both are sent.
  put(out, "callerIP", s.callerIp);
  put(out, "callerIp", s.callerIp);
  put(out, "queueName", s.queueName);
  put(out, "lastScheduleTime", s.lastRunAt);
  put(out, "nextScheduleTime", s.nextRunAt);
  put(out, "lastScheduleStates", s.lastStates);
  put(out, "error", s.error);
  return out;
}
