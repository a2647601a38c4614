-- Schedules (issue #5), mirroring the SQLite 004: cron-triggered publishes, one row per schedule, scoped to its
-- account. Times are unix ms in BIGINT, the body BYTEA, JSON as TEXT (as 001 does).
CREATE TABLE schedules (
  account_id       TEXT NOT NULL,
  id               TEXT NOT NULL,                -- scd_… or a custom id ([A-Za-z0-9._-]+)
  revision         TEXT NOT NULL,                -- new on every overwrite, pause, resume: a tick claim names it
  destination      TEXT NOT NULL,                -- http(s) URL with its query string, or a URL-group name
  cron             TEXT NOT NULL,                -- trimmed, CRON_TZ= prefix included
  spec             TEXT NOT NULL,                -- the parsed publish configuration (MessageSpec JSON)
  body             BYTEA,
  delay_ms         BIGINT NOT NULL DEFAULT 0,
  queue_name       TEXT,
  caller_ip        TEXT,
  paused           BOOLEAN NOT NULL DEFAULT FALSE,
  created_at       BIGINT NOT NULL,
  next_run_at      BIGINT,                       -- NULL: the expression never fires again
  last_run_at      BIGINT,
  last_message_ids TEXT NOT NULL DEFAULT '[]',   -- JSON array: the messages of the last tick
  error            TEXT,
  PRIMARY KEY (account_id, id)
);
-- The scheduler's query: due schedules, earliest first.
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE next_run_at IS NOT NULL;
CREATE INDEX schedules_account ON schedules (account_id, created_at);
