-- The write relay (docs/postgres.md "The write relay", src/store/postgres/relay/): the node that holds the relay's
-- advisory lock commits the plain publishes and plain deliveries' outcomes of every node, so the database's
-- transactions do not multiply with the nodes. This row says where that node listens and the secret a node shows
-- it. One row at most; a node that takes the lock overwrites it. PostgreSQL only (SQLite has one node).
CREATE TABLE relay_leader (
  id INT PRIMARY KEY CHECK (id = 1),
  address TEXT NOT NULL,
  port INT NOT NULL,
  secret TEXT NOT NULL,
  node TEXT NOT NULL,
  since BIGINT NOT NULL
);
