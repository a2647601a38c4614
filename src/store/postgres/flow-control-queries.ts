import type { FlowControlStore, FlowKeyRecord } from "../flow-control-store.js";
import type { PgContext } from "./context.js";
import type { FlowKeyRow } from "./flow-keys.js";
import type { Tx } from "./write-batcher.js";

type CountedRow = FlowKeyRow & { parallelism_count: number; wait_list_size: number };

function record(r: CountedRow): FlowKeyRecord {
  const out: FlowKeyRecord = {
    accountId: r.account_id,
    key: r.key,
    periodSec: r.period_sec,
    rateCount: r.rate_count,
    periodStart: r.period_start,
    paused: r.paused,
    pinnedParallelism: r.pinned_parallelism,
    pinnedRate: r.pinned_rate,
    createdAt: r.created_at,
    parallelismCount: r.parallelism_count,
    waitListSize: r.wait_list_size,
  };
  if (r.parallelism !== null) out.parallelism = r.parallelism;
  if (r.rate !== null) out.rate = r.rate;
  return out;
}

/** Keys with their deliveries in flight and wait list sizes (partial indexes messages_flow_active/_waiting). */
const SELECT_COUNTED = `SELECT f.*,
    (SELECT count(*) FROM messages m WHERE m.state = 'ACTIVE' AND m.account_id = f.account_id
      AND m.flow_key = f.key)::int AS parallelism_count,
    (SELECT count(*) FROM messages m WHERE m.state = 'WAITING' AND m.account_id = f.account_id
      AND m.flow_key = f.key)::int AS wait_list_size
  FROM flow_keys f`;

const listSql = {
  name: "ferry_flow_key_list",
  text: `${SELECT_COUNTED} WHERE f.account_id = $1 ORDER BY f.key`,
};
const getSql = {
  name: "ferry_flow_key_get",
  text: `${SELECT_COUNTED} WHERE f.account_id = $1 AND f.key = $2`,
};
/**
 * Every change that may let waiting messages go wakes the key now; the next claim (on any node: NOTIFY) releases
 * them. Each is one UPDATE of the key row: it waits for a claim holding the row and then applies to what that
 * claim committed, so a reset or resume is never lost under a concurrent claim's window update.
 */
const resetRateSql = {
  name: "ferry_flow_key_reset_rate",
  text: "UPDATE flow_keys SET rate_count = 0, period_start = $3, wake_at = $3 WHERE account_id = $1 AND key = $2",
};
const setPausedSql = {
  name: "ferry_flow_key_set_paused",
  text: `UPDATE flow_keys SET paused = $4, wake_at = CASE WHEN $4 THEN wake_at ELSE $3::int8 END
    WHERE account_id = $1 AND key = $2`,
};
const ensureSql = {
  name: "ferry_flow_key_ensure",
  text: `INSERT INTO flow_keys (account_id, key, parallelism, rate, period_sec, created_at)
    VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (account_id, key) DO NOTHING`,
};
const pinParallelismSql = {
  name: "ferry_flow_key_pin_parallelism",
  text: "UPDATE flow_keys SET parallelism = $3, pinned_parallelism = TRUE WHERE account_id = $1 AND key = $2",
};
const pinRateSql = {
  name: "ferry_flow_key_pin_rate",
  text: `UPDATE flow_keys SET rate = COALESCE($3, rate), period_sec = COALESCE($4, period_sec), pinned_rate = TRUE
    WHERE account_id = $1 AND key = $2`,
};
const unpinSql = {
  name: "ferry_flow_key_unpin",
  text: `UPDATE flow_keys SET pinned_parallelism = pinned_parallelism AND NOT $3, pinned_rate = pinned_rate AND NOT $4
    WHERE account_id = $1 AND key = $2`,
};
const globalActiveSql = {
  name: "ferry_flow_global_active",
  text: "SELECT count(*)::int AS n FROM messages WHERE state = 'ACTIVE' AND account_id = $1",
};

/** Reads and steers flow-control keys; the limits themselves are applied by the claim (flow-control.ts). */
export function flowControlQueries(ctx: PgContext): FlowControlStore {
  /** Runs a key update; when it applied, other nodes claim at once (their claim releases what may go now). */
  const steer = async (tx: Tx, statement: { name: string; text: string }, values: unknown[]) => {
    const changed = (await tx.execute(statement, values)) > 0;
    if (changed) tx.notifyDue();
    return changed;
  };

  return {
    flowKeyList: async ({ accountId }) => (await ctx.query<CountedRow>(listSql, [accountId])).map(record),

    flowKeyGet: async ({ accountId, key }) => {
      const [row] = await ctx.query<CountedRow>(getSql, [accountId, key]);
      return row && record(row);
    },

    flowKeyResetRate: ({ accountId, key, now }) => ctx.write((tx) => steer(tx, resetRateSql, [accountId, key, now])),

    flowKeySetPaused: ({ accountId, key, now, paused }) =>
      ctx.write((tx) => steer(tx, setPausedSql, [accountId, key, now, paused])),

    flowKeyPin: ({ accountId, key, now, parallelism, rate, periodSec }) =>
      ctx.write(async (tx) => {
        await tx.execute(ensureSql, [accountId, key, parallelism ?? null, rate ?? null, periodSec ?? 1, now]);
        if (parallelism !== undefined) await tx.execute(pinParallelismSql, [accountId, key, parallelism]);
        if (rate !== undefined || periodSec !== undefined) {
          await tx.execute(pinRateSql, [accountId, key, rate ?? null, periodSec ?? null]);
        }
        // Pinning restarts the rate state (docs/flow-control.md) and may make room for waiting messages.
        await steer(tx, resetRateSql, [accountId, key, now]);
        const [row] = await tx.query<CountedRow>(getSql, [accountId, key]);
        return record(row!);
      }),

    flowKeyUnpin: ({ accountId, key, parallelism, rate }) =>
      ctx.write(async (tx) => (await tx.execute(unpinSql, [accountId, key, parallelism, rate])) > 0),

    // No stored counter on PostgreSQL: the rows in flight are counted (migration 005 says why).
    flowGlobalActive: async ({ accountId }) => (await ctx.query<{ n: number }>(globalActiveSql, [accountId]))[0]!.n,
  };
}
