import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import type { Logger } from "pino";
import { migrationFiles, pendingMigrations } from "../migration-files.js";
import { StartupError } from "../../errors.js";
import { classifyError, databaseLabel, isUnavailableError, unavailableReason } from "./connection.js";
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
 * with backoff (0.1 s doubling to 2 s) and one short line per attempt, for up to `waitMs`
 * (FERRY_DATABASE_WAIT_MS); then start-up ends with a StartupError naming the database (password left out). An
 * attempt itself lasts at most the connection timeout (5 s, connection.ts), so the whole wait is bounded. Other
 * errors (bad SQL, authentication) fail at once. Bounded rather than forever: a wrong host or port is a
 * configuration error, and a process that exits says so where a supervisor (systemd, Kubernetes) shows it and
 * restarts it, instead of looking alive (docs/operations.md, "Start").
 */
export async function migrateWhenReachable(
  pool: pg.Pool,
  o: { log?: Logger | undefined; waitMs: number; connectionString: string },
): Promise<void> {
  const started = Date.now();
  const database = databaseLabel(o.connectionString);
  for (let attempt = 1, delay = 100; ; attempt++, delay = Math.min(delay * 2, 2000)) {
    try {
      return await migrate(pool);
    } catch (error) {
      if (!isUnavailableError(error)) throw classifyError(error);
      const reason = unavailableReason(error);
      if (Date.now() - started + delay > o.waitMs) {
        throw new StartupError(
          `database ${database} not reachable within ${o.waitMs} ms (FERRY_DATABASE_WAIT_MS), ${attempt} attempts: ${reason}`,
        );
      }
      o.log?.warn(`database ${database} not reachable (${reason}); attempt ${attempt}, next in ${delay} ms`);
      await new Promise((resolve) => setTimeout(resolve, timerDelay(delay)));
    }
  }
}
