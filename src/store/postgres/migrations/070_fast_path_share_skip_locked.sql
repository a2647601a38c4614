-- PostgreSQL only (SQLite has one node; the migration runner applies a number one dialect lacks, as 065 on SQLite).
--
-- The publish fast path (migration 067) without a subtransaction in its common case (issue 29, docs/postgres.md
-- "Speed"). It took this node's share row inside a BEGIN … EXCEPTION block with lock_timeout set around it, so that
-- a share held by this node's claim is waited for at most 50 ms: a subtransaction (its own resource owner, and a
-- subtransaction id for the row lock it takes) and two set_config calls on every publish run, although nobody
-- holds the row nearly always. Now the row is first taken with SKIP LOCKED; only when that finds nothing (the share
-- is held, or there is none yet) does the bounded wait run as before. Same locks, same decisions.
CREATE OR REPLACE FUNCTION ferry_flow_fast_path(p_account TEXT, p_count INTEGER, p_node TEXT, p_now BIGINT, p_plans TEXT[],
  p_caps BIGINT[], p_default_cap BIGINT)
RETURNS TABLE (plan TEXT, waiting BOOLEAN, active BIGINT, shared BOOLEAN)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_plan TEXT;
  v_cap BIGINT;
  v_size BIGINT;
  v_bound BIGINT;
  v_has_share BOOLEAN;
  v_wake BIGINT;
  v_found BOOLEAN;
  v_total BIGINT;
  v_mine BIGINT;
  v_others BIGINT;
  v_chunk BIGINT;
  v_lock_timeout TEXT := current_setting('lock_timeout');
BEGIN
  SELECT a.plan INTO v_plan FROM accounts a WHERE a.id = p_account;
  IF v_plan IS NULL THEN
    -- No account record: no bound (src/domain/flow-claim.ts accountCap).
    RETURN QUERY SELECT NULL::TEXT, FALSE, 0::BIGINT, FALSE;
    RETURN;
  END IF;
  v_cap := coalesce((SELECT u.cap FROM unnest(p_plans, p_caps) AS u(name, cap) WHERE u.name = v_plan), p_default_cap);
  -- A share is worth it for accounts whose bound is large: at most 1/32 of it (1,024) is added at a time.
  v_chunk := LEAST(1024, v_cap / 32);

  -- 1. This node's share: its row is taken by this node's transactions only (its publish runs, one at a time, and
  -- its claims). Mostly nobody holds it: taken at once, without the subtransaction and the lock_timeout settings
  -- that the bounded wait costs (migration 070). Otherwise (held by this node's claim, or no share yet) waited for
  -- as the account's row below, and for the same reason.
  SELECT s.size, s.bound INTO v_size, v_bound FROM flow_shares s
    WHERE s.account_id = p_account AND s.node = p_node FOR UPDATE SKIP LOCKED;
  v_has_share := FOUND;
  IF NOT v_has_share THEN
    BEGIN
      PERFORM set_config('lock_timeout', coalesce(nullif(current_setting('ferry.fast_path_lock_wait', true), ''), '50ms'), true);
      SELECT s.size, s.bound INTO v_size, v_bound FROM flow_shares s
        WHERE s.account_id = p_account AND s.node = p_node FOR UPDATE;
      v_has_share := FOUND;
      PERFORM set_config('lock_timeout', v_lock_timeout, true);
    EXCEPTION WHEN lock_not_available THEN
      RETURN; -- this node's claim holds it: the claim takes the messages
    END;
  END IF;
  IF v_has_share THEN
    -- Nothing waits for the bound (a plain read: messages that a claim parks at this moment are passed by at most
    -- this share's starts, which that claim counted as in flight already).
    SELECT f.wake_at INTO v_wake FROM flow_accounts f WHERE f.account_id = p_account;
    IF v_wake IS NULL THEN
      IF v_bound + p_count > v_size THEN
        -- A new statement under this row's lock: it sees every start of this node committed before.
        SELECT count(*) INTO v_bound FROM messages m
          WHERE m.account_id = p_account AND m.state = 'ACTIVE' AND m.lease_owner = p_node;
      END IF;
      IF v_bound + p_count <= v_size THEN
        UPDATE flow_shares s SET bound = v_bound + p_count, until = p_now + 2000
          WHERE s.account_id = p_account AND s.node = p_node;
        RETURN QUERY SELECT v_plan, FALSE, v_cap - (v_size - v_bound), TRUE;
        RETURN;
      END IF;
    END IF;
  END IF;

  -- 2. The account's row, waiting at most `ferry.fast_path_lock_wait` (50 ms; migration 021 says why). This node's
  -- share (held) is always taken before the account's row, as by this node's claims (flow-control.ts).
  BEGIN
    PERFORM set_config('lock_timeout', coalesce(nullif(current_setting('ferry.fast_path_lock_wait', true), ''), '50ms'), true);
    SELECT f.wake_at, f.active_bound INTO v_wake, v_bound
      FROM flow_accounts f WHERE f.account_id = p_account FOR UPDATE;
    v_found := FOUND;
    PERFORM set_config('lock_timeout', v_lock_timeout, true);
  EXCEPTION WHEN lock_not_available THEN
    RETURN; -- held elsewhere for longer: the claim takes the messages
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
  IF v_wake IS NOT NULL THEN
    -- Messages wait for the bound: none starts here, and this node's share goes back to them at once.
    IF v_has_share THEN
      DELETE FROM flow_shares s WHERE s.account_id = p_account AND s.node = p_node;
      UPDATE flow_accounts f SET wake_at = 0 WHERE f.account_id = p_account;
      PERFORM pg_notify('ferry_due', '');
    END IF;
    RETURN QUERY SELECT v_plan, TRUE, v_cap, FALSE;
    RETURN;
  END IF;

  IF v_chunk < 8 AND NOT v_has_share AND NOT EXISTS (SELECT 1 FROM flow_shares s WHERE s.account_id = p_account) THEN
    -- A small bound and no shares: as migration 021, with the account's row held to COMMIT. `active_bound`: the last
    -- count plus the fast-path starts since (finishes do not lower it; claims and grants reset it).
    IF v_bound IS NULL THEN
      SELECT count(*) INTO v_bound FROM messages m WHERE m.account_id = p_account AND m.state = 'ACTIVE';
    END IF;
    UPDATE flow_accounts f SET active_bound = v_bound + p_count WHERE f.account_id = p_account;
    RETURN QUERY SELECT v_plan, FALSE, v_bound, FALSE;
    RETURN;
  END IF;

  -- Lapsed shares of other nodes that no transaction holds go back to the account.
  DELETE FROM flow_shares s WHERE (s.account_id, s.node) IN (SELECT x.account_id, x.node FROM flow_shares x
    WHERE x.account_id = p_account AND x.node <> p_node AND x.until < p_now FOR UPDATE SKIP LOCKED);
  -- Deliveries in flight (all, and this node's) and the unused part of the other nodes' shares, in one snapshot
  -- taken after the account's row was granted.
  WITH c AS (SELECT m.lease_owner, count(*) AS n FROM messages m
      WHERE m.account_id = p_account AND m.state = 'ACTIVE' GROUP BY m.lease_owner)
  SELECT coalesce((SELECT sum(c.n) FROM c), 0), coalesce((SELECT sum(c.n) FROM c WHERE c.lease_owner = p_node), 0),
    coalesce((SELECT sum(GREATEST(s.size - coalesce(c.n, 0), 0)) FROM flow_shares s LEFT JOIN c ON c.lease_owner = s.node
      WHERE s.account_id = p_account AND s.node <> p_node), 0)
    INTO v_total, v_mine, v_others;
  -- Shares start deliveries the account's row does not see: its bound is unknown from now on.
  UPDATE flow_accounts f SET active_bound = NULL WHERE f.account_id = p_account AND f.active_bound IS NOT NULL;
  IF v_chunk >= 8 AND v_total + v_others + p_count + v_chunk <= v_cap / 2 THEN
    -- Plenty of room (at least half the bound stays free): this node's share becomes its deliveries in flight plus
    -- these messages plus one chunk.
    INSERT INTO flow_shares AS s (account_id, node, size, bound, until)
      VALUES (p_account, p_node, v_mine + p_count + v_chunk, v_mine + p_count, p_now + 2000)
      ON CONFLICT (account_id, node) DO UPDATE SET size = excluded.size, bound = excluded.bound, until = excluded.until;
    RETURN QUERY SELECT v_plan, FALSE, v_cap - (p_count + v_chunk), TRUE;
    RETURN;
  END IF;
  -- Near the bound: no share (one would keep slots idle that other nodes' messages wait for), the exact count.
  IF v_has_share THEN
    DELETE FROM flow_shares s WHERE s.account_id = p_account AND s.node = p_node;
  END IF;
  RETURN QUERY SELECT v_plan, FALSE, v_total + v_others, FALSE;
END
$$;
