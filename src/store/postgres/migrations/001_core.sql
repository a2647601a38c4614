-- Core tables, mirroring the SQLite 001: accounts, the hot message table, logs, dead letter queue, deduplication
-- keys, usage counters. Times are unix ms in BIGINT (parsed to numbers by the pool), bodies BYTEA, JSON as TEXT
-- (kept byte for byte, so header order survives a round trip). url_host/url_path are computed once at insert by the
-- same JS URL parser the SQLite adapter uses in its url_host()/url_path() functions, so filters behave the same.

CREATE TABLE accounts (
  id                  TEXT PRIMARY KEY,
  customer_id         TEXT NOT NULL,
  token               TEXT NOT NULL UNIQUE,
  password            TEXT NOT NULL,
  current_signing_key TEXT NOT NULL,
  next_signing_key    TEXT NOT NULL,
  plan                TEXT NOT NULL,
  state               TEXT NOT NULL DEFAULT 'active',
  active              BOOLEAN NOT NULL DEFAULT TRUE,
  created_at          BIGINT NOT NULL
);

-- The hot table: only messages still to deliver (or holding a queue slot). Delivered rows are deleted.
CREATE TABLE messages (
  seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- arrival order: FIFO within a queue, cursors
  id               TEXT NOT NULL UNIQUE,
  account_id       TEXT NOT NULL,
  kind             TEXT NOT NULL,
  parent_id        TEXT,
  state            TEXT NOT NULL,
  due_at           BIGINT NOT NULL,
  lease_owner      TEXT,
  lease_until      BIGINT,
  cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
  url              TEXT NOT NULL,
  url_host         TEXT,
  url_path         TEXT,
  body             BYTEA,
  spec             TEXT NOT NULL,
  created_at       BIGINT NOT NULL,
  not_before       BIGINT NOT NULL,
  retried          INTEGER NOT NULL DEFAULT 0,
  topic_name       TEXT,
  endpoint_name    TEXT,
  queue_name       TEXT,
  schedule_id      TEXT,
  caller_ip        TEXT,
  labels           TEXT, -- ",a,b," so one strpos finds a label
  flow_key         TEXT,
  dedup_id         TEXT
);
-- The claim query (… ORDER BY due_at LIMIT n FOR UPDATE SKIP LOCKED) reads this partial index only.
CREATE INDEX messages_due ON messages (due_at) WHERE state IN ('CREATED', 'RETRY');
CREATE INDEX messages_active ON messages (lease_until) WHERE state = 'ACTIVE';
CREATE INDEX messages_owner ON messages (lease_owner) WHERE state = 'ACTIVE';
CREATE INDEX messages_account ON messages (account_id, seq);

CREATE TABLE logs (
  seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id    TEXT NOT NULL,
  message_id    TEXT NOT NULL,
  state         TEXT NOT NULL,
  time          BIGINT NOT NULL,
  url           TEXT NOT NULL,
  url_host      TEXT,
  url_path      TEXT,
  topic_name    TEXT,
  endpoint_name TEXT,
  queue_name    TEXT,
  schedule_id   TEXT,
  caller_ip     TEXT,
  labels        TEXT,
  flow_key      TEXT,
  details       TEXT NOT NULL
);
CREATE INDEX logs_account ON logs (account_id, seq);
CREATE INDEX logs_message ON logs (message_id, state);
CREATE INDEX logs_time ON logs (time);

CREATE TABLE dlq (
  seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  dlq_id           TEXT NOT NULL UNIQUE,
  account_id       TEXT NOT NULL,
  message_id       TEXT NOT NULL,
  kind             TEXT NOT NULL,
  parent_id        TEXT,
  url              TEXT NOT NULL,
  url_host         TEXT,
  url_path         TEXT,
  body             BYTEA,
  spec             TEXT NOT NULL,
  created_at       BIGINT NOT NULL,
  not_before       BIGINT NOT NULL,
  retried          INTEGER NOT NULL,
  topic_name       TEXT,
  endpoint_name    TEXT,
  queue_name       TEXT,
  schedule_id      TEXT,
  caller_ip        TEXT,
  labels           TEXT,
  flow_key         TEXT,
  failed_at        BIGINT NOT NULL,
  response_status  INTEGER,
  response_headers TEXT NOT NULL,
  response_body    BYTEA,
  error            TEXT
);
CREATE INDEX dlq_account ON dlq (account_id, seq);
CREATE INDEX dlq_failed ON dlq (failed_at);

CREATE TABLE dedup (
  account_id TEXT NOT NULL,
  key        TEXT NOT NULL,
  message_id TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (account_id, key)
);
CREATE INDEX dedup_expires ON dedup (expires_at);

-- Per-minute counters behind the usage statistics.
CREATE TABLE usage (
  account_id TEXT NOT NULL,
  minute     BIGINT NOT NULL, -- unix ms of the minute's start
  metric     TEXT NOT NULL,
  count      BIGINT NOT NULL,
  bytes      BIGINT NOT NULL,
  PRIMARY KEY (account_id, minute, metric)
);
