import type { FlowControlStore, FlowKeyRecord } from "../flow-control-store.js";
import type { SqliteContext } from "./context.js";
import { type FlowKeyRow, flowEngine } from "./flow-control.js";

function record(r: FlowKeyRow, parallelismCount: number, waitListSize: number): FlowKeyRecord {
  const out: FlowKeyRecord = {
    accountId: r.account_id,
    key: r.key,
    periodSec: r.period_sec,
    rateCount: r.rate_count,
    periodStart: r.period_start,
    paused: r.paused === 1,
    pinnedParallelism: r.pinned_parallelism === 1,
    pinnedRate: r.pinned_rate === 1,
    createdAt: r.created_at,
    parallelismCount,
    waitListSize,
  };
  if (r.parallelism !== null) out.parallelism = r.parallelism;
  if (r.rate !== null) out.rate = r.rate;
  return out;
}

/** Reads and steers flow-control keys; the limits themselves are applied by the claim (flow-control.ts). */
export function flowControlQueries(ctx: SqliteContext): FlowControlStore {
  const { db } = ctx;
  const flow = flowEngine(db);
  const list = db.prepare("SELECT * FROM flow_keys WHERE account_id = ? ORDER BY key");
  const activeByKey = db.prepare(
    `SELECT flow_key AS key, COUNT(*) AS n FROM messages
     WHERE state = 'ACTIVE' AND account_id = ? AND flow_key IS NOT NULL GROUP BY flow_key`,
  );
  const waitingByKey = db.prepare(
    `SELECT flow_key AS key, COUNT(*) AS n FROM messages
     WHERE state = 'WAITING' AND account_id = ? AND flow_key IS NOT NULL GROUP BY flow_key`,
  );
  // Every change that may let waiting messages go wakes the key now; the next claim (on any node) releases them.
  const resetRate = db.prepare(
    "UPDATE flow_keys SET rate_count = 0, period_start = @now, wake_at = @now WHERE account_id = @accountId AND key = @key",
  );
  const setPaused = db.prepare(
    `UPDATE flow_keys SET paused = @paused, wake_at = CASE WHEN @paused = 1 THEN wake_at ELSE @now END
     WHERE account_id = @accountId AND key = @key`,
  );
  const ensure = db.prepare(
    `INSERT INTO flow_keys (account_id, key, parallelism, rate, period_sec, created_at)
     VALUES (@accountId, @key, @parallelism, @rate, @periodSec, @now) ON CONFLICT (account_id, key) DO NOTHING`,
  );
  const pinParallelism = db.prepare(
    "UPDATE flow_keys SET parallelism = @parallelism, pinned_parallelism = 1 WHERE account_id = @accountId AND key = @key",
  );
  const pinRate = db.prepare(
    `UPDATE flow_keys SET rate = COALESCE(@rate, rate), period_sec = COALESCE(@periodSec, period_sec), pinned_rate = 1
     WHERE account_id = @accountId AND key = @key`,
  );
  const unpin = db.prepare(
    `UPDATE flow_keys SET
       pinned_parallelism = CASE WHEN @parallelism = 1 THEN 0 ELSE pinned_parallelism END,
       pinned_rate = CASE WHEN @rate = 1 THEN 0 ELSE pinned_rate END
     WHERE account_id = @accountId AND key = @key`,
  );

  const globalActive = db.prepare("SELECT active FROM flow_accounts WHERE account_id = ?");

  const getRecord = (accountId: string, key: string): FlowKeyRecord | undefined => {
    const row = flow.getKey(accountId, key);
    return row && record(row, flow.countActive(accountId, key), flow.countWaiting(accountId, key));
  };

  return {
    flowKeyList: async ({ accountId }) => {
      const counts = (rows: unknown[]) => new Map((rows as { key: string; n: number }[]).map((r) => [r.key, r.n]));
      const active = counts(activeByKey.all(accountId));
      const waiting = counts(waitingByKey.all(accountId));
      return (list.all(accountId) as FlowKeyRow[]).map((r) =>
        record(r, active.get(r.key) ?? 0, waiting.get(r.key) ?? 0),
      );
    },

    flowKeyGet: async ({ accountId, key }) => getRecord(accountId, key),

    flowKeyResetRate: ({ accountId, key, now }) => ctx.write(() => resetRate.run({ accountId, key, now }).changes > 0),

    flowKeySetPaused: ({ accountId, key, now, paused }) =>
      ctx.write(() => setPaused.run({ accountId, key, now, paused: paused ? 1 : 0 }).changes > 0),

    flowKeyPin: ({ accountId, key, now, parallelism, rate, periodSec }) =>
      ctx.write(() => {
        ensure.run({
          accountId,
          key,
          now,
          parallelism: parallelism ?? null,
          rate: rate ?? null,
          periodSec: periodSec ?? 1,
        });
        if (parallelism !== undefined) pinParallelism.run({ accountId, key, parallelism });
        if (rate !== undefined || periodSec !== undefined) {
          pinRate.run({ accountId, key, rate: rate ?? null, periodSec: periodSec ?? null });
        }
        // Pinning restarts the rate state (docs/flow-control.md) and may make room for waiting messages.
        resetRate.run({ accountId, key, now });
        return getRecord(accountId, key)!;
      }),

    flowKeyUnpin: ({ accountId, key, parallelism, rate }) =>
      ctx.write(() => unpin.run({ accountId, key, parallelism: parallelism ? 1 : 0, rate: rate ? 1 : 0 }).changes > 0),

    flowGlobalActive: async ({ accountId }) => {
      const row = globalActive.get(accountId) as { active: number } | undefined;
      return row?.active ?? 0;
    },
  };
}
