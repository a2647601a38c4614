import { emptyPublishForm, type PublishForm } from "./publish-request.js";
import type { Schedule } from "./types.js";

/**
 * A schedule's record as the form that created it, for "Edit": saving sends the form again with the schedule's id
 * (`<prefix>Schedule-Id`), which overwrites every field of that schedule (docs/schedules.md "Overwrite").
 */
export function scheduleToForm(s: Schedule): PublishForm {
  const form: PublishForm = { ...emptyPublishForm(), cron: s.cron, destination: s.destination, method: s.method };
  form.contentType = "";
  for (const [name, values] of Object.entries(s.header ?? {})) {
    if (name.toLowerCase() === "content-type") form.contentType = values.join(", ");
    else form.headers.push({ name, value: values.join(", ") });
  }
  form.body = s.body ?? "";
  form.retries = String(s.retries);
  if (s.delay) form.delay = `${s.delay}s`;
  if (s.timeout) form.timeout = `${s.timeout}s`;
  if (s.retryDelayExpression) form.retryDelay = s.retryDelayExpression;
  form.callback = s.callback ?? "";
  form.failureCallback = s.failureCallback ?? "";
  form.labels = (s.labels ?? []).join(", ");
  if (s.flowControlKey) {
    form.flowControlKey = s.flowControlKey;
    if (s.parallelism) form.flowParallelism = String(s.parallelism);
    if (s.rate) form.flowRate = String(s.rate);
    if (s.period) form.flowPeriod = `${s.period}s`;
  }
  form.queue = s.queueName ?? "";
  return form;
}

/** What "Edit" cannot carry over: the console's form has no field for it, so saving would drop it. */
export function scheduleEditLosses(s: Schedule): string[] {
  const lost: string[] = [];
  if (s.bodyBase64 !== undefined) lost.push("its binary body");
  if (s.callbackHeader || s.failureCallbackHeader) lost.push("its callback headers");
  return lost;
}
