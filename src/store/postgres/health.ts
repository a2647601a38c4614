import type { DestinationFailures, HealthStore } from "../health-store.js";
import type { PgContext } from "./context.js";

interface FailureGroup {
  url: string;
  errors: number;
  failed: number;
  last_seq: number;
}

// A message with a delay is measured from the end of its delay (not_before), not from its publish. The conditions
// repeat the partial indexes' of migration 064 (messages_delivered, logs_failures), whose range is the period.
const latencySql = {
  name: "ferry_health_latencies",
  text: `SELECT GREATEST(0, finished_at - GREATEST(created_at, not_before))::int8 AS ms FROM messages
    WHERE account_id = $1 AND state = 'DELIVERED' AND finished_at >= $2 AND finished_at < $3
    ORDER BY finished_at DESC LIMIT $4`,
};

// COUNT is bigint: cast to int8, which the pool parses to a number (see overview.ts).
const failureSql = {
  name: "ferry_health_failures",
  text: `WITH recent AS (
      SELECT seq, url, state FROM logs
      WHERE account_id = $1 AND state IN ('ERROR', 'FAILED') AND time >= $2 AND time < $3
      ORDER BY time DESC LIMIT $4)
    SELECT url, (COUNT(*) FILTER (WHERE state = 'ERROR'))::int8 AS errors,
      (COUNT(*) FILTER (WHERE state = 'FAILED'))::int8 AS failed, MAX(seq)::int8 AS last_seq
    FROM recent GROUP BY url ORDER BY errors DESC, failed DESC, last_seq DESC`,
};

const entrySql = {
  name: "ferry_health_entries",
  text: "SELECT seq::int8 AS seq, message_id, time, state, details FROM logs WHERE seq = ANY($1::int8[])",
};

const queueSql = {
  name: "ferry_health_queues",
  text: `WITH recent AS (
      SELECT queue_name FROM messages
      WHERE account_id = $1 AND state = 'DELIVERED' AND finished_at >= $2 AND finished_at < $3
      ORDER BY finished_at DESC LIMIT $4)
    SELECT queue_name, COUNT(*)::int8 AS delivered FROM recent GROUP BY queue_name`,
};

/** The health read-outs (src/store/health-store.ts). */
export function healthQueries(ctx: PgContext): HealthStore {
  return {
    deliveryLatencyList: async ({ accountId, from, to, limit }) =>
      (await ctx.query<{ ms: number }>(latencySql, [accountId, from, to, limit])).map((r) => r.ms),

    destinationFailureList: async ({ accountId, from, to, scanLimit, limit }) => {
      const groups = await ctx.query<FailureGroup>(failureSql, [accountId, from, to, scanLimit]);
      const scanned = groups.reduce((sum, g) => sum + g.errors + g.failed, 0);
      const top = groups.slice(0, limit);
      const entries = top.length
        ? await ctx.query<{ seq: number; message_id: string; time: number; state: string; details: string }>(entrySql, [
            top.map((g) => g.last_seq),
          ])
        : [];
      const bySeq = new Map(entries.map((e) => [e.seq, e]));
      const destinations: DestinationFailures[] = top.flatMap((g) => {
        const e = bySeq.get(g.last_seq);
        // Retention may have deleted the entry since the first statement: the URL is then left out.
        if (!e) return [];
        const last = { messageId: e.message_id, time: e.time, state: e.state, details: e.details };
        return [{ url: g.url, errors: g.errors, failed: g.failed, last }];
      });
      return { destinations, scanned };
    },

    queueDeliveryList: async ({ accountId, from, to, limit }) => {
      const groups = await ctx.query<{ queue_name: string | null; delivered: number }>(queueSql, [
        accountId,
        from,
        to,
        limit,
      ]);
      const scanned = groups.reduce((sum, g) => sum + g.delivered, 0);
      const queues = groups.flatMap((g) => (g.queue_name === null ? [] : [{ queueName: g.queue_name, delivered: g.delivered }]));
      return { queues, scanned };
    },
  };
}
