-- Management, mirroring the SQLite 006: customers (Basic-auth users), the messaging-account fields (docs/management.md) that
-- plans cannot derive, search indexes, and the daily request quota. Times are unix ms in BIGINT unless noted.

-- seq is the insertion order SQLite gets from rowid: customerFirst() (the operator) and accountFirst() (the default
-- account) break created_at ties with it, so rows created in the same millisecond (a pinned test clock, the CLI
-- right after the first start) never make another one "the first". A renamed customer keeps its seq.
CREATE TABLE customers (
  seq          BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  email        TEXT PRIMARY KEY,
  api_key_hash TEXT NOT NULL, -- scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>: the API key itself is never stored
  created_at   BIGINT NOT NULL
);
CREATE INDEX customers_first ON customers (created_at, seq);

-- accounts.customer_id holds the owning customer's e-mail (docs/management.md: "an e-mail or a team id").
-- Rows older than this migration get their seq in table order; created_at orders first anyway, as in SQLite.
ALTER TABLE accounts ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE;
ALTER TABLE accounts ADD COLUMN modifying_state TEXT; -- NULL when no change is in progress
ALTER TABLE accounts ADD COLUMN last_plan_upgrade_time BIGINT NOT NULL DEFAULT 0; -- unix seconds
ALTER TABLE accounts ADD COLUMN reserved_price DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN prod_pack_enabled BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE accounts ADD COLUMN prometheus_enabled BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE accounts ADD COLUMN enterprise_id TEXT; -- non-NULL: an enterprise account (`enterprise:<id>`)
ALTER TABLE accounts ADD COLUMN region TEXT NOT NULL DEFAULT 'eu-central-1';
ALTER TABLE accounts ADD COLUMN budget INTEGER NOT NULL DEFAULT 0; -- dollars per month, 0 = no limit
ALTER TABLE accounts ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
CREATE INDEX accounts_first ON accounts (created_at, seq);
CREATE INDEX accounts_customer ON accounts (customer_id, created_at, seq);

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
  input_enrichment_enabled BOOLEAN NOT NULL DEFAULT FALSE,
  creation_time            BIGINT NOT NULL -- unix seconds
);
CREATE INDEX search_indexes_customer ON search_indexes (customer_id, creation_time);

-- Publish-type requests accepted per account and UTC day, consumed by one atomic upsert before the messages are
-- written, so max_requests_per_day holds across every node that shares the database.
CREATE TABLE request_quota (
  account_id TEXT NOT NULL,
  day        BIGINT NOT NULL, -- unix ms of the UTC day's start
  used       BIGINT NOT NULL,
  PRIMARY KEY (account_id, day)
);
