-- PostgreSQL only (SQLite has one writer: nothing to spread; the migration runner applies a number one dialect
-- lacks, as 065 on SQLite). A cost of several nodes on one database (issue 29, docs/postgres.md "Group commit across
-- nodes"):
--
-- Usage counters per writing connection. Every group-commit transaction adds its usage to the row of
-- (account, minute, metric) and held that row lock through its COMMIT, WAL flush included: with three nodes (and up
-- to four batches in flight per node) every transaction of an account queued on the same row. Each row now also
-- carries `writer`, the backend pid of the connection that wrote it (context.ts, ferry_flush_batch): two
-- transactions in flight at once are on two connections, so they never wait for each other's counter. Readers sum
-- over writers (usage-stats.ts already sums by bucket and metric), so every figure stays exact; a minute has at most
-- one row per connection that wrote in it.
--
-- (The flow wake was tried here as a statement trigger with transition tables, once per UPDATE instead of once per
-- row that leaves ACTIVE: it cost the database more, about twice the per-row trigger's time for a 10-row UPDATE,
-- and it ran for every UPDATE of messages. docs/postgres.md "Flow control" says what is left to try.)
ALTER TABLE usage ADD COLUMN writer INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage DROP CONSTRAINT usage_pkey;
ALTER TABLE usage ADD PRIMARY KEY (account_id, minute, metric, writer);
