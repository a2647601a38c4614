-- The full-text index takes each document's terms as it is written (docs/search.md "Storage"): with GIN's default
-- fast update, new entries wait in a pending list that every search scans linearly until a vacuum merges it; after
-- 10,000 upserts that tripled a search's time. Writes pay instead, once.
ALTER INDEX search_documents_tsv SET (fastupdate = off);
SELECT gin_clean_pending_list('search_documents_tsv'::regclass);
