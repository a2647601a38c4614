import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import type { Logger } from "pino";
import { migrationFiles, pendingMigrations } from "../migration-files.js";
import { classifyError, isUnavailableError } from "./connection.js";
import { timerDelay } from "../../domain/timers.js";

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), "migrations");

/** Any fixed number: the advisory lock that lets one node at a time migrate when several start together. */
const MIGRATION_LOCK = 7_262_001;

/**
 * Applies numbered `NNN_name.sql` files in order (numbers aligned with the SQLite adapter's), recording each version
 * once. Everything pending runs in one transaction under an advisory lock, so nodes starting at the same time never
 * apply a migration twice, and a failed migration leaves nothing half done. A database migrated by a newer Ferry is
 * refused (src/store/migration-files.ts): in a rolling upgrade, an old node must not run against the new schema.
 */
export async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
    );
    const applied = (await client.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map(
      (r) => r.version,
    );
    for (const file of pendingMigrations(migrationFiles(migrationsDir), applied)) {
      await client.query(file.sql);
      await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
        file.version,
        file.name,
        Date.now(),
      ]);
    }
    await client.query("COMMIT");
    client.release();
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    client.release(true);
    throw error;
  }
}

/**
 * At start-up the database may still be coming up (containers started together): retry while it is unreachable,
 * up to `waitMs` (default 30 s), then give up with the last error. Other errors (bad SQL, auth) fail at once.
 */
export async function migrateWhenReachable(pool: pg.Pool, log: Logger | undefined, waitMs = 30_000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
    try {
      return await migrate(pool);
    } catch (error) {
      if (!isUnavailableError(error) || Date.now() + delay > deadline) throw classifyError(error);
      log?.warn({ err: error }, "database not reachable yet; retrying");
      await new Promise((resolve) => setTimeout(resolve, timerDelay(delay)));
    }
  }
}
