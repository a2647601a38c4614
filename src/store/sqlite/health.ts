import type { DestinationFailures, HealthStore } from "../health-store.js";
import type { SqliteContext } from "./context.js";

interface FailureGroup {
  url: string;
  errors: number;
  failed: number;
  last_seq: number;
}

/**
 * The health read-outs (src/store/health-store.ts). Each repeats the condition of its partial index of migration 064
 * (`state = 'DELIVERED'`, `state = 'ERROR' OR state = 'FAILED'`, written without `IN` as src/store/sqlite/row-states.ts explains): SQLite uses a partial index only when the query implies
 * its condition. The index's range is the account's period, walked newest first and cut at the limit.
 */
export function healthQueries(ctx: SqliteContext): HealthStore {
  const { db } = ctx;
  // A message with a delay is measured from the end of its delay (not_before), not from its publish.
  const latencies = db
    .prepare(
      `SELECT MAX(0, finished_at - MAX(created_at, not_before)) FROM messages INDEXED BY messages_delivered
       WHERE account_id = @accountId AND state = 'DELIVERED' AND finished_at >= @from AND finished_at < @to
       ORDER BY finished_at DESC LIMIT @limit`,
    )
    .pluck();
  const failureGroups = db.prepare(
    `WITH recent AS (
       SELECT seq, url, state FROM logs INDEXED BY logs_failures
       WHERE account_id = @accountId AND (state = 'ERROR' OR state = 'FAILED') AND time >= @from AND time < @to
       ORDER BY time DESC LIMIT @scanLimit)
     SELECT url, SUM(state = 'ERROR') AS errors, SUM(state = 'FAILED') AS failed, MAX(seq) AS last_seq
     FROM recent GROUP BY url ORDER BY errors DESC, failed DESC, last_seq DESC`,
  );
  const entry = db.prepare("SELECT message_id, time, state, details FROM logs WHERE seq = ?");
  const queueGroups = db.prepare(
    `WITH recent AS (
       SELECT queue_name FROM messages INDEXED BY messages_delivered
       WHERE account_id = @accountId AND state = 'DELIVERED' AND finished_at >= @from AND finished_at < @to
       ORDER BY finished_at DESC LIMIT @limit)
     SELECT queue_name, COUNT(*) AS delivered FROM recent GROUP BY queue_name`,
  );

  return {
    deliveryLatencyList: async (p) => latencies.all(p) as number[],

    destinationFailureList: async ({ accountId, from, to, scanLimit, limit }) => {
      const groups = failureGroups.all({ accountId, from, to, scanLimit }) as FailureGroup[];
      const scanned = groups.reduce((sum, g) => sum + g.errors + g.failed, 0);
      const destinations: DestinationFailures[] = groups.slice(0, limit).flatMap((g) => {
        const e = entry.get(g.last_seq) as { message_id: string; time: number; state: string; details: string } | undefined;
        if (!e) return []; // both reads run in one synchronous turn: nothing deletes in between
        const last = { messageId: e.message_id, time: e.time, state: e.state, details: e.details };
        return [{ url: g.url, errors: g.errors, failed: g.failed, last }];
      });
      return { destinations, scanned };
    },

    queueDeliveryList: async (p) => {
      const groups = queueGroups.all(p) as { queue_name: string | null; delivered: number }[];
      const scanned = groups.reduce((sum, g) => sum + g.delivered, 0);
      const queues = groups.flatMap((g) => (g.queue_name === null ? [] : [{ queueName: g.queue_name, delivered: g.delivered }]));
      return { queues, scanned };
    },
  };
}
