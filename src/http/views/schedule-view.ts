import { redactedValue, redactHeaders } from "../../domain/redact.js";
import type { ScheduleWithStates } from "../../domain/schedule.js";
import type { Schedule } from "../schemas/schedules.js";
import { putBodyPresent, putPresent as put } from "./put-present.js";

/**
 * The Schedule record (docs/schedules.md "Schedule record"). Required keys are always present (`scheduleId`, `cron`,
 * `createdAt`, `destination`, `method`, `isPaused`, and `retries`, which the Python parser needs); every other key is
 * omitted when zero-valued, as the reference service does (a schedule overwritten without a body has no `body` key).
 */
export function scheduleRecord(s: ScheduleWithStates): Schedule {
  const spec = s.spec;
  const out: Schedule = {
    scheduleId: s.id,
    cron: s.cron,
    createdAt: s.createdAt,
    destination: s.destination,
    method: spec.method,
    isPaused: s.paused,
    retries: spec.retries,
  };
  put(out, "header", spec.redact ? redactHeaders(spec.headers, spec.redact) : spec.headers);
  if (spec.redact?.body && s.body !== undefined) out.body = redactedValue(s.body);
  else putBodyPresent(out, s.body);
  if (s.delayMs > 0) out.delay = Math.floor(s.delayMs / 1000);
  if (spec.timeoutMs !== undefined && spec.timeoutMs > 0) out.timeout = Math.floor(spec.timeoutMs / 1000);
  if (spec.callback) {
    out.callback = spec.callback.url;
    put(out, "callbackHeader", spec.callback.headers);
  }
  if (spec.failureCallback) {
    out.failureCallback = spec.failureCallback.url;
    put(out, "failureCallbackHeader", spec.failureCallback.headers);
  }
  // The Python and JS parsers read callerIP; the OpenAPI file shows callerIp: both are sent.
  put(out, "callerIP", s.callerIp);
  put(out, "callerIp", s.callerIp);
  put(out, "queueName", s.queueName);
  if (spec.flowControl) {
    out.flowControlKey = spec.flowControl.key;
    put(out, "parallelism", spec.flowControl.parallelism);
    put(out, "rate", spec.flowControl.rate);
    out.period = spec.flowControl.periodSec;
  }
  put(out, "retryDelayExpression", spec.retryDelayExpr);
  if (spec.labels && spec.labels.length > 0) {
    out.label = spec.labels[0];
    out.labels = spec.labels;
  }
  put(out, "lastScheduleTime", s.lastRunAt);
  put(out, "nextScheduleTime", s.nextRunAt);
  put(out, "lastScheduleStates", s.lastStates);
  put(out, "error", s.error);
  return out;
}
