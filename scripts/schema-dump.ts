/**
 * `npm run schema:dump`: writes src/store/sqlite/schema.sql and src/store/postgres/schema.sql, the schema of a fresh
 * database once every migration ran (test/helpers/schema-dump.ts says why; test/store/schema.test.ts checks them).
 * PostgreSQL: a throwaway cluster is started, or FERRY_TEST_PG_URL names the admin URL of one to use.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { openPostgresStore } from "../src/store/postgres/index.js";
import { openSqliteStore } from "../src/store/sqlite/index.js";
import { freshDatabase, startCluster } from "../test/helpers/postgres.js";
import { dumpPostgresSchema, dumpSqliteSchema, schemaDumpPath, sqliteSqlOf, sqlOf } from "../test/helpers/schema-dump.js";

const dir = mkdtempSync(join(tmpdir(), "ferry-schema-"));
try {
  const path = join(dir, "ferry.db");
  await openSqliteStore({ path, synchronous: "NORMAL" }).close();
  const db = new Database(path, { readonly: true });
  writeFileSync(schemaDumpPath("sqlite"), await dumpSqliteSchema(sqliteSqlOf(db)));
  db.close();
  process.stdout.write(`wrote ${schemaDumpPath("sqlite")}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const cluster = process.env.FERRY_TEST_PG_URL ? undefined : await startCluster();
try {
  const database = await freshDatabase(cluster?.adminUrl ?? process.env.FERRY_TEST_PG_URL);
  const store = openPostgresStore({ connectionString: database.url, poolSize: 1 });
  await store.migrate();
  await store.close();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  writeFileSync(schemaDumpPath("postgres"), await dumpPostgresSchema(sqlOf(client)));
  await client.end();
  await database.drop();
  process.stdout.write(`wrote ${schemaDumpPath("postgres")}\n`);
} finally {
  await cluster?.destroy();
}
