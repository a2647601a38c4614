import { type OptionLogFields, optionLogFields } from "../../domain/message-options.js";
import type { LogRecord } from "../../store/store.js";
import type { Same, Static } from "../schemas/common.js";
import type { LogEntry, OptionLogFieldsShape } from "../schemas/logs.js";
import { nonEmpty } from "./message-view.js";

/** The option table's log fields and their wire shape name the same keys (a compile error otherwise). */
const optionFieldsAgree: Same<OptionLogFields, Static<typeof OptionLogFieldsShape>> = true;
void optionFieldsAgree;

const hasKeys = (map: object | undefined): map is object => map !== undefined && Object.keys(map).length > 0;

/**
 * One element of `events` (docs/messaging.md "Messages and logs"). Each entry carries the message as published (from
 * its CREATED entry; the options' fields from their descriptors, src/domain/message-options.ts). Both spellings the
 * SDKs read are sent: retryDelayExpr/retryDelayExpression, responseHeader/responseHeaders.
 */
export function logRecord(e: LogRecord): LogEntry {
  const d = { ...(e.created ?? {}), ...e.details };
  const source: Parameters<typeof optionLogFields>[0] = { details: d };
  if (e.labels !== undefined) source.labels = e.labels;
  if (e.flowKey !== undefined) source.flowKey = e.flowKey;
  const out: LogEntry = { time: e.time, messageId: e.messageId, state: e.state, url: e.url, ...optionLogFields(source) };
  if (nonEmpty(d.error)) out.error = d.error;
  if (d.nextDeliveryTime !== undefined) out.nextDeliveryTime = d.nextDeliveryTime;
  if (nonEmpty(e.topicName)) out.topicName = e.topicName;
  if (nonEmpty(e.endpointName)) out.endpointName = e.endpointName;
  if (nonEmpty(e.queueName)) out.queueName = e.queueName;
  if (nonEmpty(e.scheduleId)) out.scheduleId = e.scheduleId;
  if (nonEmpty(e.callerIp)) out.callerIp = e.callerIp;
  if (nonEmpty(d.body)) out.body = d.body;
  if (d.responseStatus !== undefined) out.responseStatus = d.responseStatus;
  if (hasKeys(d.responseHeaders)) {
    out.responseHeaders = d.responseHeaders;
    out.responseHeader = d.responseHeaders;
  }
  if (nonEmpty(d.responseBody)) out.responseBody = d.responseBody;
  if (nonEmpty(d.dlqId)) out.dlqId = d.dlqId;
  return out;
}
