-- The postgres schema after every migration in src/store/postgres/migrations (generated: npm run schema:dump).
-- Do not edit: change the schema with a new migration, then regenerate this file.

-- table accounts
CREATE TABLE accounts (
  id text NOT NULL,
  customer_id text NOT NULL,
  token text NOT NULL,
  password text NOT NULL,
  current_signing_key text NOT NULL,
  next_signing_key text NOT NULL,
  plan text NOT NULL,
  state text NOT NULL DEFAULT 'active'::text,
  active boolean NOT NULL DEFAULT true,
  created_at bigint NOT NULL,
  seq bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
  modifying_state text,
  last_plan_upgrade_time bigint NOT NULL DEFAULT 0,
  reserved_price double precision NOT NULL DEFAULT 0,
  prod_pack_enabled boolean NOT NULL DEFAULT false,
  prometheus_enabled boolean NOT NULL DEFAULT false,
  enterprise_id text,
  region text NOT NULL DEFAULT 'eu-central-1'::text,
  budget integer NOT NULL DEFAULT 0,
  created_by text NOT NULL DEFAULT ''::text,
  read_only_token text,
  CONSTRAINT accounts_pkey PRIMARY KEY (id),
  CONSTRAINT accounts_seq_key UNIQUE (seq),
  CONSTRAINT accounts_token_key UNIQUE (token)
);

-- table customers
CREATE TABLE customers (
  seq bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
  email text NOT NULL,
  api_key_hash text NOT NULL,
  created_at bigint NOT NULL,
  CONSTRAINT customers_pkey PRIMARY KEY (email),
  CONSTRAINT customers_seq_key UNIQUE (seq)
);

-- table dedup
CREATE TABLE dedup (
  account_id text NOT NULL,
  key text NOT NULL,
  message_id text NOT NULL,
  expires_at bigint NOT NULL,
  CONSTRAINT dedup_pkey PRIMARY KEY (account_id, key)
);

-- table dlq
CREATE TABLE dlq (
  seq bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
  dlq_id text NOT NULL,
  account_id text NOT NULL,
  message_id text NOT NULL,
  kind text NOT NULL,
  parent_id text,
  url text NOT NULL,
  url_host text,
  url_path text,
  body bytea,
  spec text NOT NULL,
  created_at bigint NOT NULL,
  not_before bigint NOT NULL,
  retried integer NOT NULL,
  topic_name text,
  endpoint_name text,
  queue_name text,
  schedule_id text,
  caller_ip text,
  labels text,
  flow_key text,
  failed_at bigint NOT NULL,
  response_status integer,
  response_headers text NOT NULL,
  response_body bytea,
  error text,
  CONSTRAINT dlq_dlq_id_key UNIQUE (dlq_id),
  CONSTRAINT dlq_pkey PRIMARY KEY (seq)
);

-- table flow_accounts
CREATE TABLE flow_accounts (
  account_id text NOT NULL,
  wake_at bigint,
  active_bound bigint,
  CONSTRAINT flow_accounts_pkey PRIMARY KEY (account_id)
);

-- table flow_keys
CREATE TABLE flow_keys (
  account_id text NOT NULL,
  key text NOT NULL,
  parallelism integer,
  rate integer,
  period_sec integer NOT NULL DEFAULT 1,
  rate_count integer NOT NULL DEFAULT 0,
  period_start bigint NOT NULL DEFAULT 0,
  paused boolean NOT NULL DEFAULT false,
  pinned_parallelism boolean NOT NULL DEFAULT false,
  pinned_rate boolean NOT NULL DEFAULT false,
  wake_at bigint,
  created_at bigint NOT NULL,
  CONSTRAINT flow_keys_pkey PRIMARY KEY (account_id, key)
);

-- table logs
CREATE TABLE logs (
  seq bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
  account_id text NOT NULL,
  message_id text NOT NULL,
  state text NOT NULL,
  time bigint NOT NULL,
  url text NOT NULL,
  url_host text,
  url_path text,
  topic_name text,
  endpoint_name text,
  queue_name text,
  schedule_id text,
  caller_ip text,
  labels text,
  flow_key text,
  details text NOT NULL,
  CONSTRAINT logs_pkey PRIMARY KEY (seq)
);

-- table messages
CREATE TABLE messages (
  seq bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
  id text NOT NULL,
  account_id text NOT NULL,
  kind text NOT NULL,
  parent_id text,
  state text NOT NULL,
  due_at bigint NOT NULL,
  lease_owner text,
  lease_until bigint,
  cancel_requested boolean NOT NULL DEFAULT false,
  url text NOT NULL,
  url_host text,
  url_path text,
  body bytea,
  spec text NOT NULL,
  created_at bigint NOT NULL,
  not_before bigint NOT NULL,
  retried integer NOT NULL DEFAULT 0,
  topic_name text,
  endpoint_name text,
  queue_name text,
  schedule_id text,
  caller_ip text,
  labels text,
  flow_key text,
  dedup_id text,
  wait_reason text,
  CONSTRAINT messages_id_key UNIQUE (id),
  CONSTRAINT messages_pkey PRIMARY KEY (seq)
);

-- table queues
CREATE TABLE queues (
  account_id text NOT NULL,
  name text NOT NULL,
  parallelism integer NOT NULL,
  paused boolean NOT NULL DEFAULT false,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  CONSTRAINT queues_pkey PRIMARY KEY (account_id, name)
);

-- table request_quota
CREATE TABLE request_quota (
  account_id text NOT NULL,
  day bigint NOT NULL,
  used bigint NOT NULL,
  CONSTRAINT request_quota_pkey PRIMARY KEY (account_id, day)
);

-- table schedules
CREATE TABLE schedules (
  account_id text NOT NULL,
  id text NOT NULL,
  revision text NOT NULL,
  destination text NOT NULL,
  cron text NOT NULL,
  spec text NOT NULL,
  body bytea,
  delay_ms bigint NOT NULL DEFAULT 0,
  queue_name text,
  caller_ip text,
  paused boolean NOT NULL DEFAULT false,
  created_at bigint NOT NULL,
  next_run_at bigint,
  last_run_at bigint,
  last_message_ids text NOT NULL DEFAULT '[]'::text,
  error text,
  CONSTRAINT schedules_pkey PRIMARY KEY (account_id, id)
);

-- table schema_migrations
CREATE TABLE schema_migrations (
  version integer NOT NULL,
  name text NOT NULL,
  applied_at bigint NOT NULL,
  CONSTRAINT schema_migrations_pkey PRIMARY KEY (version)
);

-- table search_documents
CREATE TABLE search_documents (
  seq bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
  index_id text NOT NULL,
  namespace text NOT NULL,
  id text NOT NULL,
  content jsonb NOT NULL,
  metadata jsonb,
  text text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED,
  embedding bytea NOT NULL,
  CONSTRAINT search_documents_index_id_fkey FOREIGN KEY (index_id) REFERENCES search_indexes(id) ON DELETE CASCADE,
  CONSTRAINT search_documents_index_id_namespace_id_key UNIQUE (index_id, namespace, id),
  CONSTRAINT search_documents_pkey PRIMARY KEY (seq)
);

-- table search_index_state
CREATE TABLE search_index_state (
  index_id text NOT NULL,
  embedder text NOT NULL,
  dimension integer NOT NULL,
  documents bigint NOT NULL DEFAULT 0,
  CONSTRAINT search_index_state_index_id_fkey FOREIGN KEY (index_id) REFERENCES search_indexes(id) ON DELETE CASCADE,
  CONSTRAINT search_index_state_pkey PRIMARY KEY (index_id)
);

-- table search_indexes
CREATE TABLE search_indexes (
  id text NOT NULL,
  customer_id text NOT NULL,
  name text NOT NULL,
  endpoint text NOT NULL,
  type text NOT NULL,
  region text NOT NULL,
  partner_email text NOT NULL DEFAULT ''::text,
  token text NOT NULL,
  read_only_token text NOT NULL,
  input_enrichment_enabled boolean NOT NULL DEFAULT false,
  creation_time bigint NOT NULL,
  slug text GENERATED ALWAYS AS (substr(endpoint, (strpos(endpoint, '/search/'::text) + 8))) STORED,
  CONSTRAINT search_indexes_pkey PRIMARY KEY (id)
);

-- table search_usage
CREATE TABLE search_usage (
  index_id text NOT NULL,
  kind text NOT NULL,
  minute bigint NOT NULL,
  count bigint NOT NULL,
  CONSTRAINT search_usage_index_id_fkey FOREIGN KEY (index_id) REFERENCES search_indexes(id) ON DELETE CASCADE,
  CONSTRAINT search_usage_pkey PRIMARY KEY (index_id, kind, minute)
);

-- table topic_endpoints
CREATE TABLE topic_endpoints (
  account_id text NOT NULL,
  topic_name text NOT NULL,
  position integer NOT NULL,
  url text NOT NULL,
  name text,
  CONSTRAINT topic_endpoints_account_id_topic_name_fkey FOREIGN KEY (account_id, topic_name) REFERENCES topics(account_id, name) ON DELETE CASCADE,
  CONSTRAINT topic_endpoints_pkey PRIMARY KEY (account_id, topic_name, url)
);

-- table topics
CREATE TABLE topics (
  account_id text NOT NULL,
  name text NOT NULL,
  headers text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  CONSTRAINT topics_pkey PRIMARY KEY (account_id, name)
);

-- table usage
CREATE TABLE usage (
  account_id text NOT NULL,
  minute bigint NOT NULL,
  metric text NOT NULL,
  count bigint NOT NULL,
  bytes bigint NOT NULL,
  CONSTRAINT usage_pkey PRIMARY KEY (account_id, minute, metric)
);

-- index accounts_customer
CREATE INDEX accounts_customer ON public.accounts USING btree (customer_id, created_at, seq);

-- index accounts_first
CREATE INDEX accounts_first ON public.accounts USING btree (created_at, seq);

-- index accounts_read_only_token
CREATE UNIQUE INDEX accounts_read_only_token ON public.accounts USING btree (read_only_token);

-- index customers_first
CREATE INDEX customers_first ON public.customers USING btree (created_at, seq);

-- index dedup_expires
CREATE INDEX dedup_expires ON public.dedup USING btree (expires_at);

-- index dlq_account
CREATE INDEX dlq_account ON public.dlq USING btree (account_id, seq);

-- index dlq_failed
CREATE INDEX dlq_failed ON public.dlq USING btree (failed_at);

-- index flow_accounts_wake
CREATE INDEX flow_accounts_wake ON public.flow_accounts USING btree (wake_at) WHERE (wake_at IS NOT NULL);

-- index flow_keys_wake
CREATE INDEX flow_keys_wake ON public.flow_keys USING btree (wake_at) WHERE (wake_at IS NOT NULL);

-- index logs_account
CREATE INDEX logs_account ON public.logs USING btree (account_id, seq);

-- index logs_message
CREATE INDEX logs_message ON public.logs USING btree (message_id, state);

-- index logs_time
CREATE INDEX logs_time ON public.logs USING btree ("time");

-- index messages_account
CREATE INDEX messages_account ON public.messages USING btree (account_id, seq);

-- index messages_account_active
CREATE INDEX messages_account_active ON public.messages USING btree (account_id) WHERE (state = 'ACTIVE'::text);

-- index messages_active
CREATE INDEX messages_active ON public.messages USING btree (lease_until) WHERE (state = 'ACTIVE'::text);

-- index messages_due
CREATE INDEX messages_due ON public.messages USING btree (due_at) WHERE (state = ANY (ARRAY['CREATED'::text, 'RETRY'::text]));

-- index messages_flow_active
CREATE INDEX messages_flow_active ON public.messages USING btree (account_id, flow_key) WHERE ((state = 'ACTIVE'::text) AND (flow_key IS NOT NULL));

-- index messages_flow_waiting
CREATE INDEX messages_flow_waiting ON public.messages USING btree (account_id, flow_key, seq) WHERE (state = 'WAITING'::text);

-- index messages_global_waiting
CREATE INDEX messages_global_waiting ON public.messages USING btree (account_id, seq) WHERE ((state = 'WAITING'::text) AND (wait_reason = 'global'::text));

-- index messages_owner
CREATE INDEX messages_owner ON public.messages USING btree (lease_owner) WHERE (state = 'ACTIVE'::text);

-- index messages_parent
CREATE INDEX messages_parent ON public.messages USING btree (parent_id) WHERE (parent_id IS NOT NULL);

-- index messages_queue
CREATE INDEX messages_queue ON public.messages USING btree (account_id, queue_name, seq) WHERE (queue_name IS NOT NULL);

-- index messages_queued
CREATE INDEX messages_queued ON public.messages USING btree (seq) WHERE (state = 'QUEUED'::text);

-- index request_quota_day
CREATE INDEX request_quota_day ON public.request_quota USING btree (day);

-- index schedules_account
CREATE INDEX schedules_account ON public.schedules USING btree (account_id, created_at);

-- index schedules_due
CREATE INDEX schedules_due ON public.schedules USING btree (next_run_at) WHERE (next_run_at IS NOT NULL);

-- index search_documents_tsv
CREATE INDEX search_documents_tsv ON public.search_documents USING gin (tsv);

-- index search_indexes_customer
CREATE INDEX search_indexes_customer ON public.search_indexes USING btree (customer_id, creation_time);

-- index search_indexes_slug
CREATE INDEX search_indexes_slug ON public.search_indexes USING btree (slug);

-- index usage_minute
CREATE INDEX usage_minute ON public.usage USING btree (minute);

-- function ferry_accounts_changed
CREATE OR REPLACE FUNCTION public.ferry_accounts_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_notify('ferry_accounts', '');
  RETURN NULL;
END;
$function$;

-- function ferry_flow_fast_path
CREATE OR REPLACE FUNCTION public.ferry_flow_fast_path(p_account text, p_count integer)
 RETURNS TABLE(plan text, waiting boolean, active bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_wake BIGINT;
  v_bound BIGINT;
BEGIN
  SELECT f.wake_at, f.active_bound INTO v_wake, v_bound
    FROM flow_accounts f WHERE f.account_id = p_account FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    PERFORM 1 FROM flow_accounts f WHERE f.account_id = p_account;
    IF FOUND THEN
      RETURN; -- held elsewhere
    END IF;
    -- The account's first message: an insert that succeeds holds the new row.
    INSERT INTO flow_accounts (account_id) VALUES (p_account) ON CONFLICT (account_id) DO NOTHING;
    IF NOT FOUND THEN
      RETURN;
    END IF;
    v_wake := NULL;
    v_bound := NULL;
  END IF;
  IF v_wake IS NULL THEN
    IF v_bound IS NULL THEN
      SELECT count(*) INTO v_bound FROM messages m WHERE m.account_id = p_account AND m.state = 'ACTIVE';
    END IF;
    UPDATE flow_accounts f SET active_bound = v_bound + p_count WHERE f.account_id = p_account;
  END IF;
  RETURN QUERY SELECT a.plan, v_wake IS NOT NULL, v_bound FROM (SELECT 1) one LEFT JOIN accounts a ON a.id = p_account;
END
$function$;

-- function ferry_flow_wake
CREATE OR REPLACE FUNCTION public.ferry_flow_wake()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_wake BIGINT;
BEGIN
  UPDATE flow_accounts SET wake_at = 0 WHERE account_id = OLD.account_id AND wake_at IS NOT NULL;
  IF FOUND THEN
    PERFORM pg_notify('ferry_due', '');
  END IF;
  IF OLD.flow_key IS NOT NULL THEN
    UPDATE flow_keys SET wake_at = CASE WHEN wake_at IS NULL THEN NULL ELSE 0 END
      WHERE account_id = OLD.account_id AND key = OLD.flow_key AND parallelism IS NOT NULL
      RETURNING wake_at INTO v_wake;
    IF v_wake IS NOT NULL THEN
      PERFORM pg_notify('ferry_due', '');
    END IF;
  END IF;
  RETURN NULL;
END
$function$;

-- trigger accounts_changed
CREATE TRIGGER accounts_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.accounts FOR EACH STATEMENT EXECUTE FUNCTION ferry_accounts_changed();

-- trigger messages_flow_wake_delete
CREATE TRIGGER messages_flow_wake_delete AFTER DELETE ON public.messages FOR EACH ROW WHEN ((old.state = 'ACTIVE'::text)) EXECUTE FUNCTION ferry_flow_wake();

-- trigger messages_flow_wake_update
CREATE TRIGGER messages_flow_wake_update AFTER UPDATE OF state ON public.messages FOR EACH ROW WHEN (((old.state = 'ACTIVE'::text) AND (new.state <> 'ACTIVE'::text))) EXECUTE FUNCTION ferry_flow_wake();
