import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The numbered migrations of an adapter (`NNN_name.sql` in its migrations/ folder; both dialects use the same
 * numbers) and what is left to apply to a database, shared by src/store/sqlite/migrate.ts and
 * src/store/postgres/migrate.ts, which each apply them in their own transactions.
 */
export interface MigrationFile {
  version: number;
  /** The file name, recorded in `schema_migrations.name`. */
  name: string;
  sql: string;
}

export function migrationFiles(dir: string): MigrationFile[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort()
    .map((name) => ({ version: Number(name.split("_")[0]), name, sql: readFileSync(join(dir, name), "utf8") }));
}

/** Thrown when the database was migrated by a newer Ferry than this one: `code` says so across the store thread. */
export class SchemaTooNewError extends Error {
  readonly code = "schema_too_new";
  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
  ) {
    super(
      `the database schema is at version ${databaseVersion}, newer than this Ferry knows (up to ${codeVersion}): ` +
        "a newer Ferry migrated it; run that version (or newer) on every node, and never run an older one against it",
    );
    this.name = "SchemaTooNewError";
  }
}

/**
 * The migrations still to apply, oldest first. A database that already holds a version above the newest file is
 * refused: its schema may have dropped or reshaped what this code reads and writes (a rolling upgrade on PostgreSQL
 * where an old node restarts after a new one migrated; a downgrade). Gaps below the newest file are applied.
 */
export function pendingMigrations(files: readonly MigrationFile[], applied: Iterable<number>): MigrationFile[] {
  const done = new Set(applied);
  const newest = files.reduce((max, f) => Math.max(max, f.version), 0);
  const newestApplied = Math.max(0, ...done);
  if (newestApplied > newest) throw new SchemaTooNewError(newestApplied, newest);
  return files.filter((f) => !done.has(f.version));
}

/** Readiness (OpsStore.opsReadiness): the migration files of this build the database has not applied, by name. */
export function unappliedMigrationNames(dir: string, appliedNames: Iterable<string>): string[] {
  const done = new Set(appliedNames);
  return migrationFiles(dir)
    .map((f) => f.name)
    .filter((name) => !done.has(name));
}
