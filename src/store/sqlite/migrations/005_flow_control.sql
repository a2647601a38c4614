-- Flow control: per-key limits and rate windows, and the per-account count of deliveries in flight behind
-- max_global_parallelism. Every decision is taken inside the claim transaction from this state (docs/flow-control.md).

-- Why a WAITING row waits: 'key' (its flow-control key's limits or pause) or 'global' (its account's
-- max_global_parallelism). NULL for every other state.
ALTER TABLE messages ADD COLUMN wait_reason TEXT;

CREATE TABLE flow_keys (
  account_id         TEXT NOT NULL,
  key                TEXT NOT NULL,
  parallelism        INTEGER,                   -- NULL: no parallelism limit
  rate               INTEGER,                   -- NULL: no rate limit
  period_sec         INTEGER NOT NULL DEFAULT 1,
  rate_count         INTEGER NOT NULL DEFAULT 0, -- starts in the current window
  period_start       INTEGER NOT NULL DEFAULT 0, -- unix ms; the window is [period_start, period_start + period)
  paused             INTEGER NOT NULL DEFAULT 0,
  pinned_parallelism INTEGER NOT NULL DEFAULT 0,
  pinned_rate        INTEGER NOT NULL DEFAULT 0,
  wake_at            INTEGER,                   -- when the wait list may move again; NULL: nothing to wake
  created_at         INTEGER NOT NULL,
  PRIMARY KEY (account_id, key)
) WITHOUT ROWID;
CREATE INDEX flow_keys_wake ON flow_keys (wake_at) WHERE wake_at IS NOT NULL;

-- `active` is the number of the account's ACTIVE rows, kept exact by the triggers below (every path into and out
-- of ACTIVE, including the rescuer's and other capabilities' updates), so the publish fast path can check the
-- global bound with one primary-key read instead of counting rows.
CREATE TABLE flow_accounts (
  account_id TEXT PRIMARY KEY,
  active     INTEGER NOT NULL DEFAULT 0,
  wake_at    INTEGER -- set while messages wait for the global bound; NULL: none wait
) WITHOUT ROWID;
CREATE INDEX flow_accounts_wake ON flow_accounts (wake_at) WHERE wake_at IS NOT NULL;

INSERT INTO flow_accounts (account_id, active)
  SELECT account_id, COUNT(*) FROM messages WHERE state = 'ACTIVE' GROUP BY account_id;

CREATE TRIGGER messages_active_insert AFTER INSERT ON messages WHEN NEW.state = 'ACTIVE'
BEGIN
  INSERT INTO flow_accounts (account_id, active) VALUES (NEW.account_id, 1)
    ON CONFLICT (account_id) DO UPDATE SET active = active + 1;
END;

CREATE TRIGGER messages_active_update AFTER UPDATE OF state ON messages
  WHEN (OLD.state = 'ACTIVE') <> (NEW.state = 'ACTIVE')
BEGIN
  INSERT INTO flow_accounts (account_id, active)
    VALUES (NEW.account_id, CASE WHEN NEW.state = 'ACTIVE' THEN 1 ELSE 0 END)
    ON CONFLICT (account_id) DO UPDATE
      SET active = active + CASE WHEN NEW.state = 'ACTIVE' THEN 1 ELSE -1 END;
END;

CREATE TRIGGER messages_active_delete AFTER DELETE ON messages WHEN OLD.state = 'ACTIVE'
BEGIN
  UPDATE flow_accounts SET active = active - 1 WHERE account_id = OLD.account_id;
END;

-- Parallelism in use per key (counted inside the claim), wait lists per key (oldest first) and per account.
CREATE INDEX messages_flow_active ON messages (account_id, flow_key) WHERE state = 'ACTIVE' AND flow_key IS NOT NULL;
CREATE INDEX messages_flow_waiting ON messages (account_id, flow_key, seq) WHERE state = 'WAITING';
CREATE INDEX messages_global_waiting ON messages (account_id, seq) WHERE state = 'WAITING' AND wait_reason = 'global';
