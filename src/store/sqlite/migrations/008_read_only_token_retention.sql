-- Read-only token, bounded tables, node numbers for DLQ ids (docs/operations.md "Table bounds", docs/dlq.md).

-- A second token per messaging account that may only read (docs/errors.md `read_only`). Accounts created before
-- this migration get a random opaque one; rotate-token replaces it with one in the usual form.
ALTER TABLE accounts ADD COLUMN read_only_token TEXT;
UPDATE accounts SET read_only_token = lower(hex(randomblob(24))) WHERE read_only_token IS NULL;
CREATE UNIQUE INDEX accounts_read_only_token ON accounts (read_only_token);

-- Retention deletes expired rows in small chunks by these columns; without an index each chunk would scan the table.
CREATE INDEX dedup_expires ON dedup (expires_at);
CREATE INDEX usage_minute ON usage (minute);
CREATE INDEX request_quota_day ON request_quota (day);

-- Counters handed out once each, e.g. the node number in every DLQ id a process mints: two processes on one
-- database never get the same number, so their DLQ ids cannot collide.
CREATE TABLE id_counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
