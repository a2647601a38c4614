-- Read-only token, bounded tables, node numbers for DLQ ids, mirroring the SQLite 008 (docs/operations.md
-- "Table bounds", docs/dlq.md).

-- A second token per messaging account that may only read (docs/errors.md `read_only`). Accounts created before
-- this migration get a random opaque one (two v4 UUIDs: 244 random bits); rotate-token replaces it with one in the
-- usual form.
ALTER TABLE accounts ADD COLUMN read_only_token TEXT;
UPDATE accounts SET read_only_token = replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
  WHERE read_only_token IS NULL;
CREATE UNIQUE INDEX accounts_read_only_token ON accounts (read_only_token);

-- Retention deletes expired rows in small chunks by these columns (dedup_expires exists since 001).
CREATE INDEX usage_minute ON usage (minute);
CREATE INDEX request_quota_day ON request_quota (day);

-- Node numbers: every process that mints DLQ ids takes one at start; nextval never hands out a value twice, so DLQ
-- ids of different nodes cannot collide.
CREATE SEQUENCE ferry_node_numbers;
