-- Flow control, mirroring the SQLite 005: per-key limits and rate windows, and per-account wake times behind
-- max_global_parallelism. Every decision is taken inside the claim transaction (src/store/postgres/flow-control.ts)
-- under row locks on these tables, so the limits hold exactly with several nodes.
--
-- Unlike SQLite there is no trigger-kept `flow_accounts.active` counter: an account's deliveries in flight are
-- counted from its ACTIVE rows while its flow_accounts row is locked (see flow-control.ts). A counter kept by triggers
-- would lock that one row in every transaction that moves a row out of ACTIVE (every finish, on every node), making
-- it the hottest row of the database; counting under the lock only serialises what moves rows INTO ACTIVE (claims
-- and the publish fast path), which must serialise anyway for the bound to be exact.

-- Why a WAITING row waits: 'key' (its flow-control key's limits or pause) or 'global' (its account's
-- max_global_parallelism). NULL for every other state.
ALTER TABLE messages ADD COLUMN wait_reason TEXT;

CREATE TABLE flow_keys (
  account_id         TEXT NOT NULL,
  key                TEXT NOT NULL,
  parallelism        INTEGER,                    -- NULL: no parallelism limit
  rate               INTEGER,                    -- NULL: no rate limit
  period_sec         INTEGER NOT NULL DEFAULT 1,
  rate_count         INTEGER NOT NULL DEFAULT 0, -- starts in the current window
  period_start       BIGINT NOT NULL DEFAULT 0,  -- unix ms; the window is [period_start, period_start + period)
  paused             BOOLEAN NOT NULL DEFAULT FALSE,
  pinned_parallelism BOOLEAN NOT NULL DEFAULT FALSE,
  pinned_rate        BOOLEAN NOT NULL DEFAULT FALSE,
  wake_at            BIGINT,                     -- when the wait list may move again; NULL: nothing to wake
  created_at         BIGINT NOT NULL,
  PRIMARY KEY (account_id, key)
);
CREATE INDEX flow_keys_wake ON flow_keys (wake_at) WHERE wake_at IS NOT NULL;

-- One row per account that ever had a message started: the row every start of the account locks, and the wake time
-- of its global wait list (set while messages wait for max_global_parallelism; NULL: none wait).
CREATE TABLE flow_accounts (
  account_id   TEXT PRIMARY KEY,
  wake_at      BIGINT,
  -- The publish fast path's cheap upper bound of the account's ACTIVE rows: the last count plus every fast-path start
  -- since (rows leaving ACTIVE are not subtracted, so it can only be too high). NULL: unknown, count the rows. Each
  -- claim resets it, since its own starts are not added.
  active_bound BIGINT
);
CREATE INDEX flow_accounts_wake ON flow_accounts (wake_at) WHERE wake_at IS NOT NULL;

-- Deliveries in flight per account (the global bound) and per key (parallelism), wait lists per key (oldest first)
-- and per account.
CREATE INDEX messages_account_active ON messages (account_id) WHERE state = 'ACTIVE';
CREATE INDEX messages_flow_active ON messages (account_id, flow_key) WHERE state = 'ACTIVE' AND flow_key IS NOT NULL;
CREATE INDEX messages_flow_waiting ON messages (account_id, flow_key, seq) WHERE state = 'WAITING';
CREATE INDEX messages_global_waiting ON messages (account_id, seq) WHERE state = 'WAITING' AND wait_reason = 'global';

-- The publish fast path's gate, in one round trip: takes the account's flow row lock WITHOUT waiting (a publish
-- never queues behind a claim: when the row is busy the message simply goes through the claim), then reads the plan,
-- whether messages wait for the global bound, and an upper bound of the deliveries in flight, counting the ACTIVE rows
-- (in a NEW statement, whose snapshot includes everything committed by whoever held the lock before) only when the
-- bound is unknown. The `p_count` starts asked for are added to the bound at once: the caller may admit fewer, and a
-- bound may be too high. No row returned: the lock is held elsewhere.
CREATE FUNCTION ferry_flow_fast_path(p_account TEXT, p_count INTEGER)
RETURNS TABLE (plan TEXT, waiting BOOLEAN, active BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_wake BIGINT;
  v_bound BIGINT;
BEGIN
  SELECT f.wake_at, f.active_bound INTO v_wake, v_bound
    FROM flow_accounts f WHERE f.account_id = p_account FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    -- Missing (first message of the account) or locked: an insert that succeeds holds the new row.
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

-- Waking: a row leaving ACTIVE (a finish of any outcome, a rescued lease, a cancel) frees a slot of its account and
-- of its key, so their wait lists may move. Done by a trigger so that it costs no round trip and covers every path.
-- The wake time becomes 0 (due at once on every node's clock) and other nodes are told at commit (the channel
-- `ferry_due` of src/store/postgres/context.ts). Why the key's row is ALWAYS updated when it has a parallelism limit
-- (even without waiting messages), and the account's only while messages wait for it: see
-- src/store/postgres/flow-control.ts.
CREATE FUNCTION ferry_flow_wake() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_wake BIGINT;
BEGIN
  UPDATE flow_accounts SET wake_at = 0 WHERE account_id = OLD.account_id AND wake_at IS NOT NULL;
  IF FOUND THEN
    PERFORM pg_notify('ferry_due', '');
  END IF;
  IF OLD.flow_key IS NOT NULL THEN
    UPDATE flow_keys SET wake_at = CASE WHEN wake_at IS NULL THEN NULL ELSE 0 END
      WHERE account_id = OLD.account_id AND key = OLD.flow_key AND parallelism IS NOT NULL
      RETURNING wake_at INTO v_wake;
    IF v_wake IS NOT NULL THEN
      PERFORM pg_notify('ferry_due', '');
    END IF;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER messages_flow_wake_update AFTER UPDATE OF state ON messages
  FOR EACH ROW WHEN (OLD.state = 'ACTIVE' AND NEW.state <> 'ACTIVE') EXECUTE FUNCTION ferry_flow_wake();
CREATE TRIGGER messages_flow_wake_delete AFTER DELETE ON messages
  FOR EACH ROW WHEN (OLD.state = 'ACTIVE') EXECUTE FUNCTION ferry_flow_wake();
