import { afterEach, describe, expect, it } from "vitest";
import { type MigrationFile, pendingMigrations, SchemaTooNewError } from "../../src/store/migration-files.js";
import { committedSchema, dumpPostgresSchema, dumpSqliteSchema } from "../helpers/schema-dump.js";
import { adapters, type OpenedStore } from "./adapters.js";

/**
 * The schema of each dialect: the committed dump (src/store/<dialect>/schema.sql) is what the migrations build, and
 * the migrations refuse a database that a newer Ferry migrated (src/store/migration-files.ts).
 */
const file = (version: number): MigrationFile => ({ version, name: `${version}_x.sql`, sql: "" });

describe("pending migrations", () => {
  it("are the files not applied yet, oldest first, gaps included", () => {
    const files = [file(1), file(2), file(5), file(9)];
    expect(pendingMigrations(files, []).map((f) => f.version)).toEqual([1, 2, 5, 9]);
    expect(pendingMigrations(files, [1, 5]).map((f) => f.version)).toEqual([2, 9]);
    expect(pendingMigrations(files, [1, 2, 5, 9])).toEqual([]);
  });

  it("refuse a database holding a version newer than the newest file, naming both", () => {
    const error = (() => {
      try {
        pendingMigrations([file(1), file(9)], [1, 9, 12]);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error).toMatchObject({ code: "schema_too_new", databaseVersion: 12, codeVersion: 9 });
    expect((error as Error).message).toMatch(/version 12.*up to 9/);
  });
});

for (const adapter of adapters) {
  describe(`schema: ${adapter.name}`, () => {
    let opened: OpenedStore | undefined;
    afterEach(async () => {
      await opened?.dispose();
      opened = undefined;
    });

    it("the migrations build exactly the committed schema dump (`npm run schema:dump` after a migration)", async () => {
      opened = await adapter.open();
      const dump = adapter.name === "sqlite" ? dumpSqliteSchema(opened.sql) : dumpPostgresSchema(opened.sql);
      expect(await dump, `src/store/${adapter.name}/schema.sql is stale: run npm run schema:dump`).toBe(
        committedSchema(adapter.name),
      );
    });

    it("a database migrated by a newer Ferry is refused with both versions named, and left as it was", async () => {
      opened = await adapter.open();
      const [row] = await opened.sql<{ newest: number }>("SELECT MAX(version) AS newest FROM schema_migrations");
      const newest = Number(row!.newest);
      const future = newest + 1;
      await opened.sql("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
        future,
        `${future}_from_the_future.sql`,
        0,
      ]);
      const error = await opened.more().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "schema_too_new", databaseVersion: future, codeVersion: newest });
      expect(String((error as Error).message)).toContain(`version ${future}`);
      const kept = await opened.sql("SELECT version FROM schema_migrations WHERE version = $1", [future]);
      expect(kept).toHaveLength(1);
    });
  });
}
