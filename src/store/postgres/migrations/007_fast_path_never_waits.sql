-- The publish fast path must never wait (migration 005 explains why), but its fallback for a missing row, an
-- INSERT … ON CONFLICT DO NOTHING, was also reached when the row exists and a claim (or another publish's batch) holds
-- it; and the unique check of that INSERT waits for the holder to commit. Measured on one node: 38% of the fast-path
-- calls waited, 5.6 ms each on average; on three nodes 92%, and deadlocks with batches finishing deliveries. Now an
-- existing row that is held elsewhere is found by a plain read, which never waits, and the message goes to the claim.
CREATE OR REPLACE FUNCTION ferry_flow_fast_path(p_account TEXT, p_count INTEGER)
RETURNS TABLE (plan TEXT, waiting BOOLEAN, active BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_wake BIGINT;
  v_bound BIGINT;
BEGIN
  SELECT f.wake_at, f.active_bound INTO v_wake, v_bound
    FROM flow_accounts f WHERE f.account_id = p_account FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    PERFORM 1 FROM flow_accounts f WHERE f.account_id = p_account;
    IF FOUND THEN
      RETURN; -- held elsewhere
    END IF;
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
