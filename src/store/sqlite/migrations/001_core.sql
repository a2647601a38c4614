-- Core tables: accounts, the hot message table, logs, dead letter queue, deduplication keys, usage counters.

CREATE TABLE accounts (
  id                  TEXT PRIMARY KEY,
  customer_id         TEXT NOT NULL,
  token               TEXT NOT NULL UNIQUE,
  password            TEXT NOT NULL,
  current_signing_key TEXT NOT NULL,
  next_signing_key    TEXT NOT NULL,
  plan                TEXT NOT NULL,
  state               TEXT NOT NULL DEFAULT 'active',
  active              INTEGER NOT NULL DEFAULT 1,
  created_at          INTEGER NOT NULL
);

-- The hot table: only messages still to deliver (or holding a queue slot). Delivered rows are deleted.
CREATE TABLE messages (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT, -- arrival order: FIFO within a queue, cursor order
  id               TEXT NOT NULL UNIQUE,
  account_id       TEXT NOT NULL,
  kind             TEXT NOT NULL,
  parent_id        TEXT,
  state            TEXT NOT NULL,
  due_at           INTEGER NOT NULL,
  lease_owner      TEXT,
  lease_until      INTEGER,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  url              TEXT NOT NULL,
  body             BLOB,
  spec             TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  not_before       INTEGER NOT NULL,
  retried          INTEGER NOT NULL DEFAULT 0,
  topic_name       TEXT,
  endpoint_name    TEXT,
  queue_name       TEXT,
  schedule_id      TEXT,
  caller_ip        TEXT,
  labels           TEXT, -- ",a,b," so one LIKE finds a label
  flow_key         TEXT,
  dedup_id         TEXT
);
-- The claim query filters on state first: an index on due_at alone decays as claimed rows pile up in it.
CREATE INDEX messages_due ON messages (due_at) WHERE state IN ('CREATED', 'RETRY');
CREATE INDEX messages_active ON messages (lease_until) WHERE state = 'ACTIVE';
CREATE INDEX messages_account ON messages (account_id, seq);

CREATE TABLE logs (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id    TEXT NOT NULL,
  message_id    TEXT NOT NULL,
  state         TEXT NOT NULL,
  time          INTEGER NOT NULL,
  url           TEXT NOT NULL,
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
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,
  dlq_id           TEXT NOT NULL UNIQUE,
  account_id       TEXT NOT NULL,
  message_id       TEXT NOT NULL,
  kind             TEXT NOT NULL,
  parent_id        TEXT,
  url              TEXT NOT NULL,
  body             BLOB,
  spec             TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  not_before       INTEGER NOT NULL,
  retried          INTEGER NOT NULL,
  topic_name       TEXT,
  endpoint_name    TEXT,
  queue_name       TEXT,
  schedule_id      TEXT,
  caller_ip        TEXT,
  labels           TEXT,
  flow_key         TEXT,
  failed_at        INTEGER NOT NULL,
  response_status  INTEGER,
  response_headers TEXT NOT NULL,
  response_body    BLOB,
  error            TEXT
);
CREATE INDEX dlq_account ON dlq (account_id, seq);
CREATE INDEX dlq_failed ON dlq (failed_at);

CREATE TABLE dedup (
  account_id TEXT NOT NULL,
  key        TEXT NOT NULL,
  message_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (account_id, key)
) WITHOUT ROWID;

-- Per-minute counters behind the usage statistics.
CREATE TABLE usage (
  account_id TEXT NOT NULL,
  minute     INTEGER NOT NULL, -- unix ms of the minute's start
  metric     TEXT NOT NULL,
  count      INTEGER NOT NULL,
  bytes      INTEGER NOT NULL,
  PRIMARY KEY (account_id, minute, metric)
) WITHOUT ROWID;
