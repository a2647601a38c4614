-- The search data plane (docs/search.md): documents of every search index, their full-text index (FTS5, porter
-- stemming) and embeddings (a narrow side table scanned exactly with sqlite-vec's vec_distance_cosine, and for the
-- built-in embedder's 128 dimensions also a vec0 table for unfiltered searches).
-- Deleting an index row deletes its documents, vectors, embedder record and counters (ON DELETE CASCADE).

-- The data plane finds an index by the last segment of its endpoint (`…/search/<slug>`).
ALTER TABLE search_indexes ADD COLUMN slug TEXT GENERATED ALWAYS AS (substr(endpoint, instr(endpoint, '/search/') + 8)) VIRTUAL;
CREATE INDEX search_indexes_slug ON search_indexes (slug);

-- Which embedder built an index (and its dimension), and how many documents it holds (max_vector_count).
CREATE TABLE search_index_state (
  index_id  TEXT PRIMARY KEY REFERENCES search_indexes (id) ON DELETE CASCADE,
  embedder  TEXT NOT NULL,
  dimension INTEGER NOT NULL,
  documents INTEGER NOT NULL DEFAULT 0
);

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

-- Kept apart from the documents so the exact scan reads narrow rows.
CREATE TABLE search_vectors (
  rowid     INTEGER PRIMARY KEY REFERENCES search_documents (rowid) ON DELETE CASCADE,
  index_id  TEXT NOT NULL,
  namespace TEXT NOT NULL,
  embedding BLOB NOT NULL -- float32 little-endian
);
CREATE INDEX search_vectors_namespace ON search_vectors (index_id, namespace);

-- `rank` is bm25 with the scope column weighted 0: only the text's terms score.
CREATE VIRTUAL TABLE search_documents_fts USING fts5 (
  scope, text, content = 'search_documents', content_rowid = 'rowid',
  tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO search_documents_fts (search_documents_fts, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
CREATE TRIGGER search_documents_fts_insert AFTER INSERT ON search_documents BEGIN
  INSERT INTO search_documents_fts (rowid, scope, text) VALUES (new.rowid, new.scope, new.text);
END;
CREATE TRIGGER search_documents_fts_delete AFTER DELETE ON search_documents BEGIN
  INSERT INTO search_documents_fts (search_documents_fts, rowid, scope, text)
  VALUES ('delete', old.rowid, old.scope, old.text);
END;
CREATE TRIGGER search_documents_fts_update AFTER UPDATE OF text ON search_documents BEGIN
  INSERT INTO search_documents_fts (search_documents_fts, rowid, scope, text)
  VALUES ('delete', old.rowid, old.scope, old.text);
  INSERT INTO search_documents_fts (rowid, scope, text) VALUES (new.rowid, new.scope, new.text);
END;

-- Nearest neighbours of the built-in embedder's vectors (128 dimensions) for searches without a filter; kept in
-- step with search_vectors (its deletes, cascades included, by the trigger; its writes by the store).
CREATE VIRTUAL TABLE search_vectors_knn128 USING vec0 (
  index_id TEXT PARTITION KEY, namespace TEXT, embedding FLOAT[128] DISTANCE_METRIC=cosine
);
CREATE TRIGGER search_vectors_knn_delete AFTER DELETE ON search_vectors WHEN length(old.embedding) = 512 BEGIN
  DELETE FROM search_vectors_knn128 WHERE rowid = old.rowid;
END;

-- Operations per index, kind (update, query, rerank) and minute: daily/monthly limits and throughput_vector.
CREATE TABLE search_usage (
  index_id TEXT NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
  kind     TEXT NOT NULL,
  minute   INTEGER NOT NULL, -- unix ms of the minute's start
  count    INTEGER NOT NULL,
  PRIMARY KEY (index_id, kind, minute)
) WITHOUT ROWID;
