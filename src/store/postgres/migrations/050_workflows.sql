-- Workflow runs (docs/workflows.md): the run, its ordered step history, its waiters and early events (lookback).
-- A run id is the SDK's (`wfr_…`, possibly chosen by the user), so it is unique per account only.
CREATE TABLE workflow_runs (
  seq             BIGSERIAL PRIMARY KEY,
  account_id      TEXT NOT NULL,
  run_id          TEXT NOT NULL,
  url             TEXT NOT NULL,
  state           TEXT NOT NULL,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL,
  completed_at    BIGINT,
  label           TEXT,
  config          TEXT NOT NULL,
  initial_body    BYTEA NOT NULL,
  result          TEXT,
  invoker         TEXT,
  caller_ip       TEXT,
  dlq_id          TEXT,
  flow_key        TEXT,
  rest_trigger    BOOLEAN NOT NULL DEFAULT false,
  init_message_id TEXT NOT NULL,
  step_count      BIGINT NOT NULL DEFAULT 0,
  UNIQUE (account_id, run_id)
);
CREATE INDEX workflow_runs_ended ON workflow_runs (completed_at) WHERE completed_at IS NOT NULL;

-- position orders the history: entry 0 is the payload; appends to one run are serialised by its row.
CREATE TABLE workflow_steps (
  account_id TEXT NOT NULL,
  run_id     TEXT NOT NULL,
  position   BIGINT NOT NULL,
  message_id TEXT NOT NULL,
  call_type  TEXT NOT NULL,
  body       BYTEA NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (account_id, run_id, position)
);

CREATE TABLE workflow_waiters (
  waiter_id          TEXT PRIMARY KEY,
  account_id         TEXT NOT NULL,
  event_id           TEXT NOT NULL,
  run_id             TEXT NOT NULL,
  deadline           BIGINT NOT NULL,
  created_at         BIGINT NOT NULL,
  timeout_message_id TEXT NOT NULL,
  waiter             TEXT NOT NULL
);
CREATE INDEX workflow_waiters_event ON workflow_waiters (account_id, event_id);
CREATE INDEX workflow_waiters_run ON workflow_waiters (account_id, run_id);

CREATE TABLE workflow_events (
  account_id TEXT NOT NULL,
  run_id     TEXT NOT NULL,
  event_id   TEXT NOT NULL,
  data       BYTEA NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (account_id, run_id, event_id)
);
