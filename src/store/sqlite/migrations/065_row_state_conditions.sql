-- The partial indexes of migration 060 written without `IN` over three constants (src/store/sqlite/row-states.ts):
-- SQLite builds an ephemeral table for such a list each time it evaluates it, and it evaluates every partial index's
-- condition for every row an INSERT or UPDATE writes (four per publish, eight per delivery). Same rows indexed.
DROP INDEX messages_live;
CREATE INDEX messages_live ON messages (account_id, seq)
  WHERE state <> 'DELIVERED' AND state <> 'FAILED' AND state <> 'CANCELED';
DROP INDEX messages_ended;
CREATE INDEX messages_ended ON messages (finished_at)
  WHERE (state = 'DELIVERED' OR state = 'FAILED' OR state = 'CANCELED');
DROP INDEX messages_queue;
CREATE INDEX messages_queue ON messages (account_id, queue_name, seq)
  WHERE queue_name IS NOT NULL AND state <> 'DELIVERED' AND state <> 'FAILED' AND state <> 'CANCELED';
DROP INDEX messages_parent;
CREATE INDEX messages_parent ON messages (parent_id)
  WHERE parent_id IS NOT NULL AND state <> 'DELIVERED' AND state <> 'FAILED' AND state <> 'CANCELED';
