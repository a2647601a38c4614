import type { LogFilter } from "../store.js";

/** Collects positional parameters: `add(v)` returns its placeholder (`$1`, `$2` …). */
export class Params {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * Builds the WHERE conditions of a message, log or DLQ filter. Values of one filter are OR'ed, different filters
 * AND'ed (docs/messaging.md "Messages and logs"). `time` names the column that fromDate/toDate apply to; `idColumn` the
 * message-id column. Host and path are columns here (computed at insert), not functions as in SQLite.
 */
export function filterSql(filter: LogFilter, columns: { time: string; idColumn: string }, params: Params): string[] {
  const where: string[] = [];
  const anyOf = (values: string[] | undefined, column: string) => {
    if (!values || values.length === 0) return;
    where.push(`${column} = ANY(${params.add(values)}::text[])`);
  };
  anyOf(filter.messageIds, columns.idColumn);
  anyOf(filter.topicName, "topic_name");
  anyOf(filter.queueName, "queue_name");
  anyOf(filter.url, "url");
  anyOf(filter.host, "url_host");
  anyOf(filter.path, "url_path");
  if (filter.label && filter.label.length > 0) {
    // labels is ",a,b,": an exact label match, with no LIKE wildcards to escape.
    where.push(`(${filter.label.map((l) => `strpos(labels, ${params.add(`,${l},`)}) > 0`).join(" OR ")})`);
  }
  anyOf(filter.flowControlKey, "flow_key");
  anyOf(filter.scheduleId, "schedule_id");
  anyOf(filter.callerIp, "caller_ip");
  anyOf(filter.state, "state");
  if (filter.fromDate !== undefined) where.push(`${columns.time} >= ${params.add(filter.fromDate)}`);
  if (filter.toDate !== undefined) where.push(`${columns.time} <= ${params.add(filter.toDate)}`);
  return where;
}

/** ` AND a AND b` (or nothing) to append after a WHERE that already has a condition. */
export const andAll = (where: string[]): string => where.map((w) => ` AND ${w}`).join("");
