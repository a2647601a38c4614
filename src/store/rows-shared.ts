import type { LogDetails, LogEntry } from "../domain/log.js";

/**
 * Row mapping both adapters share: the `logs` table has the same columns and value types in SQLite and PostgreSQL.
 * (Message and account rows differ in their boolean and integer types, so each adapter maps those itself.)
 */

/** Labels are stored as ",a,b," so that one LIKE finds a label. */
export const joinLabels = (labels: string[] | undefined): string | null =>
  labels && labels.length > 0 ? `,${labels.join(",")},` : null;

export interface LogRow {
  seq: number;
  account_id: string;
  message_id: string;
  state: string;
  time: number;
  url: string;
  topic_name: string | null;
  endpoint_name: string | null;
  queue_name: string | null;
  schedule_id: string | null;
  caller_ip: string | null;
  labels: string | null;
  flow_key: string | null;
  details: string;
}

export function logFromRow(r: LogRow): LogEntry & { seq: string } {
  const e: LogEntry & { seq: string } = {
    seq: String(r.seq),
    accountId: r.account_id,
    messageId: r.message_id,
    state: r.state as LogEntry["state"],
    time: r.time,
    url: r.url,
    details: JSON.parse(r.details) as LogDetails,
  };
  if (r.topic_name !== null) e.topicName = r.topic_name;
  if (r.endpoint_name !== null) e.endpointName = r.endpoint_name;
  if (r.queue_name !== null) e.queueName = r.queue_name;
  if (r.schedule_id !== null) e.scheduleId = r.schedule_id;
  if (r.caller_ip !== null) e.callerIp = r.caller_ip;
  if (r.labels !== null) e.labels = r.labels.split(",").filter((l) => l !== "");
  if (r.flow_key !== null) e.flowKey = r.flow_key;
  return e;
}
