-- URL groups (path word `topics`) with their endpoints and default headers, and FIFO queues. Mirrors the SQLite 002.

CREATE TABLE topics (
  account_id TEXT NOT NULL,
  name       TEXT NOT NULL,
  headers    TEXT, -- default headers as a JSON header map (canonical name -> values); NULL when none
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (account_id, name)
);

CREATE TABLE topic_endpoints (
  account_id TEXT NOT NULL,
  topic_name TEXT NOT NULL,
  position   INTEGER NOT NULL, -- insertion order: fan-out and listings follow it
  url        TEXT NOT NULL,    -- the endpoint's identity inside its group
  name       TEXT,
  PRIMARY KEY (account_id, topic_name, url),
  FOREIGN KEY (account_id, topic_name) REFERENCES topics (account_id, name) ON DELETE CASCADE
);

CREATE TABLE queues (
  account_id  TEXT NOT NULL,
  name        TEXT NOT NULL,
  parallelism INTEGER NOT NULL,
  paused      BOOLEAN NOT NULL DEFAULT FALSE,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  PRIMARY KEY (account_id, name)
);

-- The head of a queue (its first `parallelism` unfinished rows by arrival order) is read at every promotion.
CREATE INDEX messages_queue ON messages (account_id, queue_name, seq) WHERE queue_name IS NOT NULL;
-- A HELD queue message is released when its last callback (parent_id = its id) finishes.
CREATE INDEX messages_parent ON messages (parent_id) WHERE parent_id IS NOT NULL;
