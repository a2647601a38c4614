import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { freshDatabase } from "./postgres.js";
import { testStore } from "./server.js";

/**
 * For tests that spawn `ferry serve` themselves (startup, shutdown): a fresh database per call on the store under
 * test (a PostgreSQL database, or a SQLite file in its own temporary folder), and a list of cleanup steps run after
 * the file's tests, the last pushed first, so a process is stopped before its database goes. Call it at the top
 * level of a test file.
 */
export function scratchDatabases(prefix: string): {
  cleanup: (() => Promise<unknown>)[];
  databaseUrl: () => Promise<string>;
} {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => {});
  });
  const databaseUrl = async (): Promise<string> => {
    if (testStore === "postgres") {
      const db = await freshDatabase();
      cleanup.push(() => db.drop());
      return db.url;
    }
    const dir = mkdtempSync(join(tmpdir(), prefix));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    return `sqlite:${join(dir, "ferry.db")}`;
  };
  return { cleanup, databaseUrl };
}
