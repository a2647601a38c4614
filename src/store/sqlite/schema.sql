-- The sqlite schema after every migration in src/store/sqlite/migrations (generated: npm run schema:dump).
-- Do not edit: change the schema with a new migration, then regenerate this file.

-- table accounts
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
, modifying_state TEXT, last_plan_upgrade_time INTEGER NOT NULL DEFAULT 0, reserved_price REAL NOT NULL DEFAULT 0, prod_pack_enabled INTEGER NOT NULL DEFAULT 0, prometheus_enabled INTEGER NOT NULL DEFAULT 0, enterprise_id TEXT, region TEXT NOT NULL DEFAULT 'eu-central-1', budget INTEGER NOT NULL DEFAULT 0, created_by TEXT NOT NULL DEFAULT '', read_only_token TEXT);

-- table customers
CREATE TABLE customers (
  email        TEXT PRIMARY KEY,
  api_key_hash TEXT NOT NULL, -- scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>: the API key itself is never stored
  created_at   INTEGER NOT NULL
);

-- table dedup
CREATE TABLE dedup (
  account_id TEXT NOT NULL,
  key        TEXT NOT NULL,
  message_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (account_id, key)
) WITHOUT ROWID;

-- table dlq
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

-- table flow_accounts
CREATE TABLE flow_accounts (
  account_id TEXT PRIMARY KEY,
  active     INTEGER NOT NULL DEFAULT 0,
  wake_at    INTEGER -- set while messages wait for the global bound; NULL: none wait
) WITHOUT ROWID;

-- table flow_keys
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

-- table id_counters
CREATE TABLE id_counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;

-- table logs
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

-- table messages
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
, wait_reason TEXT);

-- table queues
CREATE TABLE queues (
  account_id  TEXT NOT NULL,
  name        TEXT NOT NULL,
  parallelism INTEGER NOT NULL,
  paused      INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (account_id, name)
);

-- table request_quota
CREATE TABLE request_quota (
  account_id TEXT NOT NULL,
  day        INTEGER NOT NULL, -- unix ms of the UTC day's start
  used       INTEGER NOT NULL,
  PRIMARY KEY (account_id, day)
) WITHOUT ROWID;

-- table schedules
CREATE TABLE schedules (
  account_id       TEXT NOT NULL,
  id               TEXT NOT NULL,                -- scd_… or a custom id ([A-Za-z0-9._-]+)
  revision         TEXT NOT NULL,                -- new on every overwrite, pause, resume: a tick claim names it
  destination      TEXT NOT NULL,                -- http(s) URL with its query string, or a URL-group name
  cron             TEXT NOT NULL,                -- trimmed, CRON_TZ= prefix included
  spec             TEXT NOT NULL,                -- the parsed publish configuration (MessageSpec JSON)
  body             BLOB,
  delay_ms         INTEGER NOT NULL DEFAULT 0,
  queue_name       TEXT,
  caller_ip        TEXT,
  paused           INTEGER NOT NULL DEFAULT 0,
  created_at       INTEGER NOT NULL,
  next_run_at      INTEGER,                      -- NULL: the expression never fires again
  last_run_at      INTEGER,
  last_message_ids TEXT NOT NULL DEFAULT '[]',   -- JSON array: the messages of the last tick
  error            TEXT,
  PRIMARY KEY (account_id, id)
);

-- table schema_migrations
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);

-- table search_documents
CREATE TABLE search_documents (
  rowid     INTEGER PRIMARY KEY,
  index_id  TEXT NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  namespace TEXT NOT NULL,
  id        TEXT NOT NULL,
  content   TEXT NOT NULL, -- JSON object
  metadata  TEXT,          -- JSON object or NULL
  text      TEXT NOT NULL, -- the searched values of content
  scope     TEXT NOT NULL, -- one token per (index, name): the full-text search of one name stays inside FTS5
  UNIQUE (index_id, namespace, id)
);

-- table search_documents_fts
CREATE VIRTUAL TABLE search_documents_fts USING fts5 (
  scope, text, content = 'search_documents', content_rowid = 'rowid',
  tokenize = 'porter unicode61 remove_diacritics 2'
);

-- table search_documents_fts_config
CREATE TABLE 'search_documents_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;

-- table search_documents_fts_data
CREATE TABLE 'search_documents_fts_data'(id INTEGER PRIMARY KEY, block BLOB);

-- table search_documents_fts_docsize
CREATE TABLE 'search_documents_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);

-- table search_documents_fts_idx
CREATE TABLE 'search_documents_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

-- table search_index_state
CREATE TABLE search_index_state (
  index_id  TEXT PRIMARY KEY REFERENCES search_indexes (id) ON DELETE CASCADE,
  embedder  TEXT NOT NULL,
  dimension INTEGER NOT NULL,
  documents INTEGER NOT NULL DEFAULT 0
);

-- table search_indexes
CREATE TABLE search_indexes (
  id                       TEXT PRIMARY KEY,
  customer_id              TEXT NOT NULL,
  name                     TEXT NOT NULL,
  endpoint                 TEXT NOT NULL,
  type                     TEXT NOT NULL,
  region                   TEXT NOT NULL,
  partner_email            TEXT NOT NULL DEFAULT '',
  token                    TEXT NOT NULL,
  read_only_token          TEXT NOT NULL,
  input_enrichment_enabled INTEGER NOT NULL DEFAULT 0,
  creation_time            INTEGER NOT NULL -- unix seconds
, slug TEXT GENERATED ALWAYS AS (substr(endpoint, instr(endpoint, '/search/') + 8)) VIRTUAL);

-- table search_usage
CREATE TABLE search_usage (
  index_id TEXT NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  kind     TEXT NOT NULL,
  minute   INTEGER NOT NULL, -- unix ms of the minute's start
  count    INTEGER NOT NULL,
  PRIMARY KEY (index_id, kind, minute)
) WITHOUT ROWID;

-- table search_vectors
CREATE TABLE search_vectors (
  rowid     INTEGER PRIMARY KEY REFERENCES search_documents (rowid) ON DELETE CASCADE,
  index_id  TEXT NOT NULL,
  namespace TEXT NOT NULL,
  embedding BLOB NOT NULL -- float32 little-endian
);

-- table search_vectors_knn128
CREATE VIRTUAL TABLE search_vectors_knn128 USING vec0 (
  index_id TEXT PARTITION KEY, namespace TEXT, embedding FLOAT[128] DISTANCE_METRIC=cosine
);

-- table search_vectors_knn128_chunks
CREATE TABLE "search_vectors_knn128_chunks"(chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,size INTEGER NOT NULL,sequence_id integer,partition00,validity BLOB NOT NULL, rowids BLOB NOT NULL);

-- table search_vectors_knn128_info
CREATE TABLE "search_vectors_knn128_info" (key text primary key, value any);

-- table search_vectors_knn128_metadatachunks00
CREATE TABLE "search_vectors_knn128_metadatachunks00"(rowid PRIMARY KEY, data BLOB NOT NULL);

-- table search_vectors_knn128_metadatatext00
CREATE TABLE "search_vectors_knn128_metadatatext00"(rowid PRIMARY KEY, data TEXT);

-- table search_vectors_knn128_rowids
CREATE TABLE "search_vectors_knn128_rowids"(rowid INTEGER PRIMARY KEY AUTOINCREMENT,id,chunk_id INTEGER,chunk_offset INTEGER);

-- table search_vectors_knn128_vector_chunks00
CREATE TABLE "search_vectors_knn128_vector_chunks00"(rowid PRIMARY KEY,vectors BLOB NOT NULL);

-- table topic_endpoints
CREATE TABLE topic_endpoints (
  account_id TEXT NOT NULL,
  topic_name TEXT NOT NULL,
  position   INTEGER NOT NULL, -- insertion order: fan-out and listings follow it
  url        TEXT NOT NULL,    -- the endpoint's identity inside its group
  name       TEXT,
  PRIMARY KEY (account_id, topic_name, url),
  FOREIGN KEY (account_id, topic_name) REFERENCES topics (account_id, name) ON DELETE CASCADE
);

-- table topics
CREATE TABLE topics (
  account_id TEXT NOT NULL,
  name       TEXT NOT NULL,
  headers    TEXT, -- default headers as a JSON header map (canonical name -> values); NULL when none
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (account_id, name)
);

-- table usage
CREATE TABLE usage (
  account_id TEXT NOT NULL,
  minute     INTEGER NOT NULL, -- unix ms of the minute's start
  metric     TEXT NOT NULL,
  count      INTEGER NOT NULL,
  bytes      INTEGER NOT NULL,
  PRIMARY KEY (account_id, minute, metric)
) WITHOUT ROWID;

-- index accounts_customer
CREATE INDEX accounts_customer ON accounts (customer_id, created_at);

-- index accounts_read_only_token
CREATE UNIQUE INDEX accounts_read_only_token ON accounts (read_only_token);

-- index dedup_expires
CREATE INDEX dedup_expires ON dedup (expires_at);

-- index dlq_account
CREATE INDEX dlq_account ON dlq (account_id, seq);

-- index dlq_failed
CREATE INDEX dlq_failed ON dlq (failed_at);

-- index flow_accounts_wake
CREATE INDEX flow_accounts_wake ON flow_accounts (wake_at) WHERE wake_at IS NOT NULL;

-- index flow_keys_wake
CREATE INDEX flow_keys_wake ON flow_keys (wake_at) WHERE wake_at IS NOT NULL;

-- index logs_account
CREATE INDEX logs_account ON logs (account_id, seq);

-- index logs_message
CREATE INDEX logs_message ON logs (message_id, state);

-- index logs_time
CREATE INDEX logs_time ON logs (time);

-- index messages_account
CREATE INDEX messages_account ON messages (account_id, seq);

-- index messages_active
CREATE INDEX messages_active ON messages (lease_until) WHERE state = 'ACTIVE';

-- index messages_due
CREATE INDEX messages_due ON messages (due_at) WHERE state IN ('CREATED', 'RETRY');

-- index messages_flow_active
CREATE INDEX messages_flow_active ON messages (account_id, flow_key) WHERE state = 'ACTIVE' AND flow_key IS NOT NULL;

-- index messages_flow_waiting
CREATE INDEX messages_flow_waiting ON messages (account_id, flow_key, seq) WHERE state = 'WAITING';

-- index messages_global_waiting
CREATE INDEX messages_global_waiting ON messages (account_id, seq) WHERE state = 'WAITING' AND wait_reason = 'global';

-- index messages_parent
CREATE INDEX messages_parent ON messages (parent_id) WHERE parent_id IS NOT NULL;

-- index messages_queue
CREATE INDEX messages_queue ON messages (account_id, queue_name, seq) WHERE queue_name IS NOT NULL;

-- index messages_queued
CREATE INDEX messages_queued ON messages (seq) WHERE state = 'QUEUED';

-- index request_quota_day
CREATE INDEX request_quota_day ON request_quota (day);

-- index schedules_account
CREATE INDEX schedules_account ON schedules (account_id, created_at);

-- index schedules_due
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE next_run_at IS NOT NULL;

-- index search_indexes_customer
CREATE INDEX search_indexes_customer ON search_indexes (customer_id, creation_time);

-- index search_indexes_slug
CREATE INDEX search_indexes_slug ON search_indexes (slug);

-- index search_vectors_namespace
CREATE INDEX search_vectors_namespace ON search_vectors (index_id, namespace);

-- index usage_minute
CREATE INDEX usage_minute ON usage (minute);

-- trigger messages_active_delete
CREATE TRIGGER messages_active_delete AFTER DELETE ON messages WHEN OLD.state = 'ACTIVE'
BEGIN
  UPDATE flow_accounts SET active = active - 1 WHERE account_id = OLD.account_id;
END;

-- trigger messages_active_insert
CREATE TRIGGER messages_active_insert AFTER INSERT ON messages WHEN NEW.state = 'ACTIVE'
BEGIN
  INSERT INTO flow_accounts (account_id, active) VALUES (NEW.account_id, 1)
    ON CONFLICT (account_id) DO UPDATE SET active = active + 1;
END;

-- trigger messages_active_update
CREATE TRIGGER messages_active_update AFTER UPDATE OF state ON messages
  WHEN (OLD.state = 'ACTIVE') <> (NEW.state = 'ACTIVE')
BEGIN
  INSERT INTO flow_accounts (account_id, active)
    VALUES (NEW.account_id, CASE WHEN NEW.state = 'ACTIVE' THEN 1 ELSE 0 END)
    ON CONFLICT (account_id) DO UPDATE
      SET active = active + CASE WHEN NEW.state = 'ACTIVE' THEN 1 ELSE -1 END;
END;

-- trigger search_documents_fts_delete
CREATE TRIGGER search_documents_fts_delete AFTER DELETE ON search_documents BEGIN
  INSERT INTO search_documents_fts (search_documents_fts, rowid, scope, text)
  VALUES ('delete', old.rowid, old.scope, old.text);
END;

-- trigger search_documents_fts_insert
CREATE TRIGGER search_documents_fts_insert AFTER INSERT ON search_documents BEGIN
  INSERT INTO search_documents_fts (rowid, scope, text) VALUES (new.rowid, new.scope, new.text);
END;

-- trigger search_documents_fts_update
CREATE TRIGGER search_documents_fts_update AFTER UPDATE OF text ON search_documents BEGIN
  INSERT INTO search_documents_fts (search_documents_fts, rowid, scope, text)
  VALUES ('delete', old.rowid, old.scope, old.text);
  INSERT INTO search_documents_fts (rowid, scope, text) VALUES (new.rowid, new.scope, new.text);
END;

-- trigger search_vectors_knn_delete
CREATE TRIGGER search_vectors_knn_delete AFTER DELETE ON search_vectors WHEN length(old.embedding) = 512 BEGIN
  DELETE FROM search_vectors_knn128 WHERE rowid = old.rowid;
END;
