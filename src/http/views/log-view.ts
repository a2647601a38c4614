import type { LogRecord } from "../../store/store.js";
import { put } from "./message-view.js";

/**
 * One element of `events` (docs/messaging.md "Messages and logs"). Each entry carries the message as published (from
 * its CREATED entry). Both spellings the SDKs read are sent: retryDelayExpr/retryDelayExpression,
 * responseHeader/responseHeaders.
 */
export function logRecord(e: LogRecord): Record<string, unknown> {
  const d = { ...(e.created ?? {}), ...e.details };
  const out: Record<string, unknown> = { time: e.time, messageId: e.messageId, state: e.state, url: e.url };
  put(out, "error", d.error);
  put(out, "nextDeliveryTime", d.nextDeliveryTime);
  put(out, "topicName", e.topicName);
  put(out, "endpointName", e.endpointName);
  put(out, "queueName", e.queueName);
  put(out, "scheduleId", e.scheduleId);
  put(out, "callerIp", e.callerIp);
  put(out, "header", d.header);
  put(out, "body", d.body);
  put(out, "responseStatus", d.responseStatus);
  put(out, "responseHeaders", d.responseHeaders);
  put(out, "responseHeader", d.responseHeaders);
  put(out, "responseBody", d.responseBody);
  put(out, "timeout", d.timeout);
  put(out, "method", d.method);
  put(out, "callback", d.callback);
  put(out, "callbackHeaders", d.callbackHeaders);
  put(out, "failureCallback", d.failureCallback);
  put(out, "failureCallbackHeaders", d.failureCallbackHeaders);
  if (d.maxRetries !== undefined) out.maxRetries = d.maxRetries;
  put(out, "retryDelayExpr", d.retryDelayExpr);
  put(out, "retryDelayExpression", d.retryDelayExpr);
  put(out, "dlqId", d.dlqId);
  if (e.labels && e.labels.length > 0) {
    out.label = e.labels[0];
    out.labels = e.labels;
  }
  if (e.flowKey !== undefined) {
    out.flowControlKey = e.flowKey;
    put(out, "parallelism", d.parallelism);
    put(out, "rate", d.rate);
    out.period = d.period ?? 1;
  }
  return out;
}
