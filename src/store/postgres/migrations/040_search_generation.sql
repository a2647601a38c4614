-- A random value set anew by every write to an index's documents (docs/search.md "Vector cache"): each node keeps
-- each name's vectors in memory and uses them only while this value is the one they were loaded or updated at, so
-- a write through another node makes them reload.
ALTER TABLE search_index_state ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
