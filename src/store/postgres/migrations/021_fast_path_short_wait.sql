-- The publish fast path now waits a little (50 ms by default) for its account's row instead of skipping it at once.
-- Since publish runs go one at a time per node (write-batcher.ts, oneAtATime), the row is held mostly by the
-- publish runs of OTHER nodes and by claims, each only until its COMMIT: a few milliseconds. A message that skips
-- goes through the claim instead, tens of milliseconds later and at the cost of a claim transaction. A longer hold
-- (a slow claim, a stalled node) still sends the message to the claim after the bound, as migration 007 did at once,
-- and the bounded wait can never form a deadlock: it ends before PostgreSQL's deadlock check (1 s) would run.
-- The bound is the setting `ferry.fast_path_lock_wait` when set (tests set it per database), else 50ms.
CREATE OR REPLACE FUNCTION ferry_flow_fast_path(p_account TEXT, p_count INTEGER)
RETURNS TABLE (plan TEXT, waiting BOOLEAN, active BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_wake BIGINT;
  v_bound BIGINT;
  v_found BOOLEAN;
  v_lock_timeout TEXT := current_setting('lock_timeout');
BEGIN
  BEGIN
    PERFORM set_config('lock_timeout', coalesce(nullif(current_setting('ferry.fast_path_lock_wait', true), ''), '50ms'), true);
    SELECT f.wake_at, f.active_bound INTO v_wake, v_bound
      FROM flow_accounts f WHERE f.account_id = p_account FOR UPDATE;
    v_found := FOUND;
    PERFORM set_config('lock_timeout', v_lock_timeout, true);
  EXCEPTION WHEN lock_not_available THEN
    -- The subtransaction's rollback has restored lock_timeout already.
    RETURN; -- held elsewhere for longer: the claim takes the message
  END;
  IF NOT v_found THEN
    -- The account's first message: an insert that succeeds holds the new row.
    INSERT INTO flow_accounts (account_id) VALUES (p_account) ON CONFLICT (account_id) DO NOTHING;
    IF NOT FOUND THEN
      RETURN;
    END IF;
    v_wake := NULL;
    v_bound := NULL;
  END IF;
  IF v_wake IS NULL THEN
    IF v_bound IS NULL THEN
      SELECT count(*) INTO v_bound FROM messages m WHERE m.account_id = p_account AND m.state = 'ACTIVE';
    END IF;
    UPDATE flow_accounts f SET active_bound = v_bound + p_count WHERE f.account_id = p_account;
  END IF;
  RETURN QUERY SELECT a.plan, v_wake IS NOT NULL, v_bound FROM (SELECT 1) one LEFT JOIN accounts a ON a.id = p_account;
END
$$;
