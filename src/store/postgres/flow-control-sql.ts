import { WAKE_BATCH } from "../../domain/flow-claim.js";
import { arrayRows } from "./rows.js";

/**
 * The SQL of the PostgreSQL claim (flow-control.ts): the statements that lock, load and apply what
 * src/domain/flow-claim.ts decides. Named statements, prepared once per connection.
 */

/** A flow-control key's identity as parallel arrays (arrayRows), and with its configuration (flow-keys.ts). */
export const KEY_COLUMNS = [
  ["account_id", "text"],
  ["key", "text"],
] as const;
export const KEY_CONFIG_COLUMNS = [
  ...KEY_COLUMNS,
  ["parallelism", "int"],
  ["rate", "int"],
  ["period_sec", "int"],
] as const;

/**
 * claimKeyOf (src/domain/destination.ts) in SQL: the URL up to the first "/" from its ninth character on. The
 * claim walks past the rows of destinations whose share of the claiming node is used up by this key
 * (docs/reliability.md "Isolation").
 */
export const DESTINATION_KEY_SQL =
  "(CASE WHEN strpos(substr(url, 9), '/') > 0 THEN left(url, strpos(substr(url, 9), '/') + 7) ELSE url END)";

export const survey = {
  name: "ferry_flow_survey",
  text: `(SELECT 'key' AS kind, account_id, key FROM flow_keys WHERE wake_at <= $1 ORDER BY wake_at LIMIT ${WAKE_BATCH})
    UNION ALL
    (SELECT 'account', account_id, NULL FROM flow_accounts WHERE wake_at <= $1 ORDER BY wake_at LIMIT ${WAKE_BATCH})
    UNION ALL
    (SELECT DISTINCT 'candidate', account_id, flow_key FROM (
      SELECT account_id, flow_key FROM messages WHERE state IN ('CREATED', 'RETRY') AND due_at <= $1
      ORDER BY due_at LIMIT $2) c)`,
};
export const lockAccounts = (skip: boolean) => ({
  name: skip ? "ferry_flow_try_lock_accounts" : "ferry_flow_lock_accounts",
  text: `SELECT f.account_id, f.wake_at, a.plan FROM flow_accounts f LEFT JOIN accounts a ON a.id = f.account_id
    WHERE f.account_id = ANY($1::text[]) ORDER BY f.account_id FOR UPDATE OF f${skip ? " SKIP LOCKED" : ""}`,
});
/**
 * Rows the lock did not return are missing, or (SKIP LOCKED) held elsewhere. Only missing ones are inserted: the
 * unique check of an INSERT would wait for the holder of an existing row, which a claim that skips must never do.
 */
export const ensureAccounts = {
  name: "ferry_flow_ensure_accounts",
  text: `INSERT INTO flow_accounts (account_id) SELECT u.id FROM unnest($1::text[]) AS u(id)
    WHERE NOT EXISTS (SELECT 1 FROM flow_accounts f WHERE f.account_id = u.id)
    ON CONFLICT (account_id) DO NOTHING`,
};
export const lockKeys = (skip: boolean) => ({
  name: skip ? "ferry_flow_try_lock_keys" : "ferry_flow_lock_keys",
  text: `SELECT f.* FROM flow_keys f JOIN ${arrayRows("u", KEY_COLUMNS)}
      ON f.account_id = u.account_id AND f.key = u.key
    ORDER BY f.account_id, f.key FOR UPDATE OF f${skip ? " SKIP LOCKED" : ""}`,
});
/** A key whose messages were inserted by a path that did not record it gets one from the message's own values. */
export const ensureKeys = {
  name: "ferry_flow_ensure_keys",
  text: `INSERT INTO flow_keys (account_id, key, parallelism, rate, period_sec, created_at)
    SELECT u.*, $6::int8 FROM ${arrayRows("u", KEY_CONFIG_COLUMNS)}
    WHERE NOT EXISTS (SELECT 1 FROM flow_keys f WHERE f.account_id = u.account_id AND f.key = u.key)
    ON CONFLICT (account_id, key) DO NOTHING`,
};
/**
 * Deliveries in flight per account and per key: run only once their rows are locked (see above). An account's
 * figure also holds the unused part of every node's share of its bound (migration 067): those deliveries may start
 * on the publish fast path without this claim seeing them. Lapsed shares nobody holds are deleted (SKIP LOCKED: a
 * share its node holds right now is still in use) and no longer count. The accounts' fast path bounds are reset
 * (migration 005): this claim's starts are not added to them.
 */
export const countActive = {
  name: "ferry_flow_count_active",
  text: `WITH reset AS (UPDATE flow_accounts SET active_bound = NULL
      WHERE account_id = ANY($1::text[]) AND active_bound IS NOT NULL),
    lapsed AS (DELETE FROM flow_shares s WHERE (s.account_id, s.node) IN (SELECT x.account_id, x.node FROM flow_shares x
      WHERE x.account_id = ANY($1::text[]) AND x.until < $4::int8 FOR UPDATE SKIP LOCKED)
      RETURNING s.account_id, s.node),
    owners AS (SELECT account_id, lease_owner, count(*) AS n FROM messages
      WHERE state = 'ACTIVE' AND account_id = ANY($1::text[]) GROUP BY account_id, lease_owner),
    unused AS (SELECT s.account_id, sum(GREATEST(s.size - coalesce(o.n, 0), 0)) AS n FROM flow_shares s
      LEFT JOIN owners o ON o.account_id = s.account_id AND o.lease_owner = s.node
      WHERE s.account_id = ANY($1::text[])
        AND NOT EXISTS (SELECT 1 FROM lapsed l WHERE l.account_id = s.account_id AND l.node = s.node)
      GROUP BY s.account_id)
    SELECT a.account_id, NULL AS key, (coalesce((SELECT sum(o.n) FROM owners o WHERE o.account_id = a.account_id), 0)
        + coalesce((SELECT u.n FROM unused u WHERE u.account_id = a.account_id), 0))::int AS n
      FROM unnest($1::text[]) AS a(account_id)
    UNION ALL
    SELECT m.account_id, m.flow_key, count(*)::int FROM messages m
      JOIN ${arrayRows("u", KEY_COLUMNS, 2)} ON m.account_id = u.account_id AND m.flow_key = u.key
      WHERE m.state = 'ACTIVE' AND m.flow_key IS NOT NULL GROUP BY m.account_id, m.flow_key`,
};
/**
 * This node's shares of the locked accounts (migration 067 `ferry_flow_lock_own_shares`): taken after the accounts'
 * rows and before the keys'. Returns the accounts whose share this claim could not take (`$3`: waited for first).
 */
export const lockOwnShares = {
  name: "ferry_flow_lock_own_shares",
  text: "SELECT account_id FROM ferry_flow_lock_own_shares($1::text[], $2, $3)",
};
/** The deliveries this claim started for its own node count against that node's shares (held: lockOwnShares). */
export const addToOwnShares = {
  name: "ferry_flow_add_to_own_shares",
  text: `UPDATE flow_shares s SET bound = s.bound + u.n
    FROM ${arrayRows("u", [["account_id", "text"], ["n", "int8"]], ["$1", "$3"])}
    WHERE s.account_id = u.account_id AND s.node = $2`,
};
/**
 * Releases waiting rows oldest first: `room` per key (key = NULL: the account's global wait list). The state is
 * checked again on the row itself: a row changed by another transaction meanwhile is re-read after its lock.
 */
export const release = {
  name: "ferry_flow_release",
  text: `WITH r AS (SELECT * FROM ${arrayRows("r", [...KEY_COLUMNS, ["room", "int"]])}),
    picked AS (
      SELECT w.seq FROM r CROSS JOIN LATERAL (
        SELECT m.seq FROM messages m WHERE r.key IS NOT NULL AND m.state = 'WAITING' AND m.account_id = r.account_id
          AND m.flow_key = r.key AND m.wait_reason = 'key' ORDER BY m.seq LIMIT r.room) w
      UNION ALL
      SELECT w.seq FROM r CROSS JOIN LATERAL (
        SELECT m.seq FROM messages m WHERE r.key IS NULL AND m.state = 'WAITING' AND m.wait_reason = 'global'
          AND m.account_id = r.account_id ORDER BY m.seq LIMIT r.room) w)
    UPDATE messages SET state = CASE WHEN retried > 0 THEN 'RETRY' ELSE 'CREATED' END, wait_reason = NULL
    WHERE seq IN (SELECT seq FROM picked) AND state = 'WAITING'`,
};
/**
 * Same shape as the foundation's claim (partial index messages_due); `$3` are candidates left for another claim.
 * `skip`: also past the destination keys in `$4` (the variant runs only while one is skipped, so the usual claim
 * keeps its statement).
 */
export const candidates = (skip: boolean) => ({
  name: skip ? "ferry_flow_candidates_skipping" : "ferry_flow_candidates",
  text: `SELECT * FROM messages WHERE state IN ('CREATED', 'RETRY') AND due_at <= $1 AND seq <> ALL($3::int8[])
    ${skip ? `AND ${DESTINATION_KEY_SQL} <> ALL($4::text[])` : ""}
    ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
});
/** Starts (reason NULL) and parks (reason 'key' or 'global') the candidates of one round. */
export const apply = {
  name: "ferry_flow_apply",
  text: `UPDATE messages m SET state = CASE WHEN u.reason IS NULL THEN 'ACTIVE' ELSE 'WAITING' END,
      wait_reason = u.reason,
      lease_owner = CASE WHEN u.reason IS NULL THEN $3 END,
      lease_until = CASE WHEN u.reason IS NULL THEN $4::int8 END
    FROM ${arrayRows("u", [["seq", "int8"], ["reason", "text"]])} WHERE m.seq = u.seq`,
};
/** Windows and next wake times of the keys looked at; a key without waiting messages has nothing to wake. */
export const saveKeys = {
  name: "ferry_flow_save_keys",
  text: `UPDATE flow_keys f SET rate_count = u.rate_count, period_start = u.period_start,
      wake_at = CASE WHEN EXISTS (SELECT 1 FROM messages m WHERE m.state = 'WAITING' AND m.account_id = f.account_id
        AND m.flow_key = f.key AND m.wait_reason = 'key') THEN u.wake_at END
    FROM ${arrayRows("u", [...KEY_COLUMNS, ["rate_count", "int"], ["period_start", "int8"], ["wake_at", "int8"]])}
    WHERE f.account_id = u.account_id AND f.key = u.key`,
};
export const saveAccounts = {
  name: "ferry_flow_save_accounts",
  text: `UPDATE flow_accounts f SET wake_at = CASE WHEN u.parked OR EXISTS (SELECT 1 FROM messages m
        WHERE m.state = 'WAITING' AND m.wait_reason = 'global' AND m.account_id = f.account_id) THEN u.wake_at END
    FROM ${arrayRows("u", [["account_id", "text"], ["parked", "boolean"], ["wake_at", "int8"]])}
    WHERE f.account_id = u.account_id`,
};
