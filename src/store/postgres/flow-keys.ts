import type { NewMessage } from "../../domain/message.js";
import type { Tx } from "./write-batcher.js";
import { KEY_CONFIG_COLUMNS } from "./flow-control-sql.js";
import { arrayRows } from "./rows.js";

/**
 * A message's Svc-Flow-Control-Value configures its key (the latest message wins), except for pinned parts
 * (domain/flow-window.ts `mergeConfig`, written here in SQL so it is atomic across nodes). The UPDATE touches, and
 * so locks, a key only when its configuration really changes, which is rare: publishing to a busy key does not
 * queue behind the claims that hold it. A new configuration may make room for waiting messages, so it wakes the key.
 * A key seen for the first time is inserted. Only then: the unique check of an INSERT waits for any transaction that
 * wrote a newer version of the key's row (a claim moving its window, whose wake_at change is not a HOT update), and
 * a claim may in turn wait for a lock this publish's batch holds (its account's flow row, taken by the fast path of
 * another message of the batch): a deadlock. Existing keys are found by a plain read, which never waits.
 */
const noteSql = {
  name: "ferry_flow_note_keys",
  text: `WITH input AS (
      SELECT * FROM ${arrayRows("i", KEY_CONFIG_COLUMNS)}),
    changed AS (
      UPDATE flow_keys f SET
        parallelism = CASE WHEN f.pinned_parallelism THEN f.parallelism ELSE i.parallelism END,
        rate = CASE WHEN f.pinned_rate THEN f.rate ELSE i.rate END,
        period_sec = CASE WHEN f.pinned_rate THEN f.period_sec ELSE i.period_sec END,
        wake_at = CASE WHEN f.wake_at IS NULL OR f.wake_at > $6 THEN $6 ELSE f.wake_at END
      FROM input i
      WHERE f.account_id = i.account_id AND f.key = i.key
        AND ((NOT f.pinned_parallelism AND f.parallelism IS DISTINCT FROM i.parallelism)
          OR (NOT f.pinned_rate AND (f.rate IS DISTINCT FROM i.rate OR f.period_sec <> i.period_sec)))
      RETURNING f.account_id, f.key),
    added AS (
      INSERT INTO flow_keys (account_id, key, parallelism, rate, period_sec, created_at)
      SELECT i.account_id, i.key, i.parallelism, i.rate, i.period_sec, $6 FROM input i
      WHERE NOT EXISTS (SELECT 1 FROM changed c WHERE c.account_id = i.account_id AND c.key = i.key)
        AND NOT EXISTS (SELECT 1 FROM flow_keys f WHERE f.account_id = i.account_id AND f.key = i.key)
      ON CONFLICT (account_id, key) DO NOTHING
      RETURNING 1)
    SELECT (SELECT count(*) FROM changed)::int AS changed, (SELECT count(*) FROM added)::int AS added`,
};

/** Records the flow-control configuration of inserted messages; called by every message insert (context.ts). */
export async function noteFlowKeys(tx: Tx, messages: readonly NewMessage[], now: number): Promise<void> {
  // The last message of a key wins, as if they had been inserted one by one; sorted so keys lock in a fixed order.
  const latest = new Map<string, NewMessage>();
  for (const m of messages) {
    if (m.spec.flowControl) latest.set(`${m.accountId}\u0000${m.spec.flowControl.key}`, m);
  }
  if (latest.size === 0) return;
  const keyed = [...latest.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, m]) => m);
  const fc = keyed.map((m) => m.spec.flowControl!);
  const [row] = await tx.query<{ changed: number }>(noteSql, [
    keyed.map((m) => m.accountId),
    fc.map((f) => f.key),
    fc.map((f) => f.parallelism ?? null),
    fc.map((f) => f.rate ?? null),
    fc.map((f) => f.periodSec),
    now,
  ]);
  // Waiting messages of a reconfigured key may go now, on any node.
  if (row!.changed > 0) tx.notifyDue();
}
