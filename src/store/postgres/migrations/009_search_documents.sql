-- The search data plane (docs/search.md): documents of every search index with a tsvector (english configuration,
-- GIN index) for the full-text side and their embeddings (float32 bytes) scored exactly for the semantic side.
-- Deleting an index row deletes its documents, embedder record and counters (ON DELETE CASCADE).

-- The data plane finds an index by the last segment of its endpoint (`…/search/<slug>`).
ALTER TABLE search_indexes
  ADD COLUMN slug TEXT GENERATED ALWAYS AS (substr(endpoint, strpos(endpoint, '/search/') + 8)) STORED;
CREATE INDEX search_indexes_slug ON search_indexes (slug);

-- Which embedder built an index (and its dimension), and how many documents it holds (max_vector_count).
CREATE TABLE search_index_state (
  index_id  TEXT PRIMARY KEY REFERENCES search_indexes (id) ON DELETE CASCADE,
  embedder  TEXT NOT NULL,
  dimension INTEGER NOT NULL,
  documents BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE search_documents (
  seq       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  index_id  TEXT NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  namespace TEXT NOT NULL,
  id        TEXT COLLATE "C" NOT NULL, -- byte order, like SQLite: range and prefix listings agree on both stores
  content   JSONB NOT NULL,
  metadata  JSONB,
  text      TEXT NOT NULL, -- the searched values of content
  tsv       TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
  embedding BYTEA NOT NULL, -- float32 little-endian
  UNIQUE (index_id, namespace, id)
);
CREATE INDEX search_documents_tsv ON search_documents USING GIN (tsv);

-- Operations per index, kind (update, query, rerank) and minute: daily/monthly limits and throughput_vector.
CREATE TABLE search_usage (
  index_id TEXT NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  kind     TEXT NOT NULL,
  minute   BIGINT NOT NULL, -- unix ms of the minute's start
  count    BIGINT NOT NULL,
  PRIMARY KEY (index_id, kind, minute)
);
