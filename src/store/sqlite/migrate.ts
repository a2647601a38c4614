import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";
import { migrationFiles, pendingMigrations } from "../migration-files.js";

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), "migrations");

/**
 * Applies numbered `NNN_name.sql` files in order, each in its own transaction, recording each version once. A
 * database migrated by a newer Ferry is refused (src/store/migration-files.ts).
 */
export function migrate(db: Database.Database): void {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
  );
  const applied = (db.prepare("SELECT version FROM schema_migrations").all() as { version: number }[]).map(
    (r) => r.version,
  );
  for (const file of pendingMigrations(migrationFiles(migrationsDir), applied)) {
    db.transaction(() => {
      db.exec(file.sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        file.version,
        file.name,
        Date.now(),
      );
    }).immediate();
  }
}
