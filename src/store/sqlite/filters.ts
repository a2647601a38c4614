import type { LogFilter } from "../store.js";

/**
 * Builds the WHERE clause of a message, log or DLQ filter. Values of one filter are OR'ed, different filters AND'ed
 * (docs/messaging.md "Messages and logs"). `time` names the column that fromDate/toDate apply to; `idColumn` the
 * message-id column.
 */
export function filterSql(
  filter: LogFilter,
  columns: { time: string; idColumn: string },
): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const anyOf = (values: string[] | undefined, sql: (placeholder: string) => string) => {
    if (!values || values.length === 0) return;
    where.push(`(${values.map(() => sql("?")).join(" OR ")})`);
    params.push(...values);
  };
  anyOf(filter.messageIds, (p) => `${columns.idColumn} = ${p}`);
  anyOf(filter.topicName, (p) => `topic_name = ${p}`);
  anyOf(filter.queueName, (p) => `queue_name = ${p}`);
  anyOf(filter.url, (p) => `url = ${p}`);
  anyOf(filter.host, (p) => `url_host(url) = ${p}`);
  anyOf(filter.path, (p) => `url_path(url) = ${p}`);
  anyOf(filter.label, (p) => `labels LIKE '%,' || ${p} || ',%'`);
  anyOf(filter.flowControlKey, (p) => `flow_key = ${p}`);
  anyOf(filter.scheduleId, (p) => `schedule_id = ${p}`);
  anyOf(filter.callerIp, (p) => `caller_ip = ${p}`);
  anyOf(filter.state, (p) => `state = ${p}`);
  if (filter.fromDate !== undefined) {
    where.push(`${columns.time} >= ?`);
    params.push(filter.fromDate);
  }
  if (filter.toDate !== undefined) {
    where.push(`${columns.time} <= ?`);
    params.push(filter.toDate);
  }
  return { where, params };
}
