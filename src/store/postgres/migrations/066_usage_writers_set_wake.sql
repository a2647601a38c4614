-- PostgreSQL only (SQLite has one writer: nothing to spread; the migration runner applies a number one dialect
-- lacks, as 065 on SQLite). Two costs of several nodes on one database (issue 29, docs/postgres.md "Group commit
-- across nodes"):
--
-- 1. Usage counters per writing connection. Every group-commit transaction adds its usage to the row of
--    (account, minute, metric) and held that row lock through its COMMIT, WAL flush included: with three nodes (and
--    up to four batches in flight per node) every transaction of an account queued on the same row. Each row now
--    also carries `writer`, the backend pid of the connection that wrote it (context.ts, ferry_flush_batch): two
--    transactions in flight at once are on two connections, so they never wait for each other's counter. Readers
--    sum over writers (usage-stats.ts already sums by bucket and metric), so every figure stays exact; a minute has
--    at most one row per connection that wrote in it.
ALTER TABLE usage ADD COLUMN writer INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage DROP CONSTRAINT usage_pkey;
ALTER TABLE usage ADD PRIMARY KEY (account_id, minute, metric, writer);

-- 2. The flow-control wake (migration 005) once per UPDATE statement instead of once per row: a batch of plain
--    deliveries ends its rows in one UPDATE (messages.ts), and the per-row trigger ran a plpgsql call and one or two
--    UPDATEs for each of them. The statement trigger reads the rows that left ACTIVE from the transition tables and
--    wakes each account and each key once. The rule is the same as ferry_flow_wake's (src/domain/flow-claim.ts
--    `wakeOnLeavingActive`; test/store/rules-in-sql.test.ts checks it), and so is the locking that keeps a wake from
--    being lost under a claim (src/store/postgres/flow-control.ts): an account's row is only touched while messages
--    wait for its bound, a key's row with a parallelism limit always, each waiting for a claim that holds it and then
--    applying to what that claim committed. Rows are locked in the claim's order (accounts sorted, then keys sorted),
--    where the per-row trigger took them in the order of the updated rows. Deletes of ACTIVE rows are rare (rows from
--    before migration 060, redacted messages) and keep the per-row trigger: a statement trigger on DELETE would copy
--    every row that retention deletes.
CREATE FUNCTION ferry_flow_wake_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_accounts TEXT[];
  v_keys TEXT[];
  v_key_accounts TEXT[];
  v_woken BIGINT;
BEGIN
  SELECT array_agg(DISTINCT o.account_id) INTO v_accounts
    FROM ferry_left o JOIN ferry_entered n ON n.seq = o.seq WHERE o.state = 'ACTIVE' AND n.state <> 'ACTIVE';
  IF v_accounts IS NULL THEN
    RETURN NULL;
  END IF;
  WITH locked AS (
    SELECT f.account_id FROM flow_accounts f WHERE f.account_id = ANY(v_accounts) AND f.wake_at IS NOT NULL
    ORDER BY f.account_id FOR UPDATE),
  woken AS (
    UPDATE flow_accounts f SET wake_at = 0 FROM locked l WHERE f.account_id = l.account_id AND f.wake_at IS NOT NULL
    RETURNING 1)
  SELECT count(*) INTO v_woken FROM woken;
  SELECT array_agg(k.account_id ORDER BY k.account_id, k.flow_key), array_agg(k.flow_key ORDER BY k.account_id, k.flow_key)
    INTO v_key_accounts, v_keys
    FROM (SELECT DISTINCT o.account_id, o.flow_key FROM ferry_left o JOIN ferry_entered n ON n.seq = o.seq
      WHERE o.state = 'ACTIVE' AND n.state <> 'ACTIVE' AND o.flow_key IS NOT NULL) k;
  IF v_keys IS NOT NULL THEN
    WITH locked AS (
      SELECT f.account_id, f.key FROM flow_keys f JOIN unnest(v_key_accounts, v_keys) AS u(account_id, key)
        ON f.account_id = u.account_id AND f.key = u.key
      WHERE f.parallelism IS NOT NULL ORDER BY f.account_id, f.key FOR UPDATE OF f),
    woken AS (
      UPDATE flow_keys f SET wake_at = CASE WHEN f.wake_at IS NULL THEN NULL ELSE 0 END
      FROM locked l WHERE f.account_id = l.account_id AND f.key = l.key AND f.parallelism IS NOT NULL
      RETURNING f.wake_at)
    SELECT v_woken + count(*) INTO v_woken FROM woken WHERE wake_at IS NOT NULL;
  END IF;
  IF v_woken > 0 THEN
    PERFORM pg_notify('ferry_due', '');
  END IF;
  RETURN NULL;
END
$$;
DROP TRIGGER messages_flow_wake_update ON messages;
CREATE TRIGGER messages_flow_wake_rows AFTER UPDATE ON messages
  REFERENCING OLD TABLE AS ferry_left NEW TABLE AS ferry_entered
  FOR EACH STATEMENT EXECUTE FUNCTION ferry_flow_wake_rows();
