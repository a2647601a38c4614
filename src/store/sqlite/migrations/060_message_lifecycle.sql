-- The message row carries its lifecycle and stays after it ends until log retention (docs/states.md "The message
-- row"): the log list derives its CREATED, first ACTIVE and DELIVERED entries from it (src/store/derived-log.ts).
-- Rows already here keep derived_log = 0: their entries were written out and they leave the table when they end.
ALTER TABLE messages ADD COLUMN derived_log INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN first_leased_at INTEGER;
ALTER TABLE messages ADD COLUMN active_seq INTEGER;     -- position of the first ACTIVE entry in the log
ALTER TABLE messages ADD COLUMN finished_at INTEGER;
ALTER TABLE messages ADD COLUMN finished_seq INTEGER;   -- position of the DELIVERED entry in the log
ALTER TABLE messages ADD COLUMN outcome TEXT;           -- DELIVERED, FAILED or CANCELED once it ended (HELD too)
ALTER TABLE messages ADD COLUMN last_status INTEGER;    -- the destination's status of the last attempt
ALTER TABLE messages ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;

-- The log list's derived arms, newest or oldest first per account (CREATED uses messages_account).
CREATE INDEX messages_active_seq ON messages (account_id, active_seq) WHERE active_seq IS NOT NULL;
CREATE INDEX messages_finished_seq ON messages (account_id, finished_seq) WHERE finished_seq IS NOT NULL;
-- An account's live rows (a cancel, the console's count of messages in flight) without the kept ones.
CREATE INDEX messages_live ON messages (account_id, seq) WHERE state NOT IN ('DELIVERED', 'FAILED', 'CANCELED');
-- Retention deletes ended rows by age.
CREATE INDEX messages_ended ON messages (finished_at) WHERE state IN ('DELIVERED', 'FAILED', 'CANCELED');
-- A queue's head and a parent's callbacks count live rows only: kept rows must not be scanned there.
DROP INDEX messages_queue;
CREATE INDEX messages_queue ON messages (account_id, queue_name, seq)
  WHERE queue_name IS NOT NULL AND state NOT IN ('DELIVERED', 'FAILED', 'CANCELED');
DROP INDEX messages_parent;
CREATE INDEX messages_parent ON messages (parent_id)
  WHERE parent_id IS NOT NULL AND state NOT IN ('DELIVERED', 'FAILED', 'CANCELED');

-- One sequence numbers every log entry, written or derived, and every message row (its CREATED entry's position):
-- src/store/sqlite/context.ts draws from it inside each write transaction.
INSERT INTO id_counters (name, value) VALUES ('log_seq', MAX(
  COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'logs'), 0),
  COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0)));
-- Log retention's last cutoff: derived entries older than it are past retention like written ones, even while their
-- row lives on (a message retried for longer than the retention keeps its row until it ends).
INSERT INTO id_counters (name, value) VALUES ('log_horizon', 0);
