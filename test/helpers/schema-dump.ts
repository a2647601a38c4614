import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";
import type pg from "pg";

/**
 * The schema a fresh database has once every migration ran, as text, one dump per dialect, committed as
 * src/store/sqlite/schema.sql and src/store/postgres/schema.sql (`npm run schema:dump` writes them; test/store/
 * schema.test.ts fails when the migrations and the committed dump drift apart). A reader sees the whole schema in one
 * file instead of adding up ten migrations. Objects are sorted by kind and name so the dump does not depend on the
 * order the migrations created them in.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const schemaDumpPath = (dialect: "sqlite" | "postgres") => join(root, "src", "store", dialect, "schema.sql");
export const committedSchema = (dialect: "sqlite" | "postgres") => readFileSync(schemaDumpPath(dialect), "utf8");

const header = (dialect: string) =>
  `-- The ${dialect} schema after every migration in src/store/${dialect}/migrations (generated: npm run schema:dump).\n` +
  "-- Do not edit: change the schema with a new migration, then regenerate this file.\n";

/** Raw SQL runner: `$n` placeholders, rows back (test/store/adapters.ts `sql`). */
type Sql = <R = Record<string, unknown>>(text: string, values?: unknown[]) => Promise<R[]>;

export async function dumpSqliteSchema(sql: Sql): Promise<string> {
  const rows = await sql<{ type: string; name: string; sql: string }>(
    `SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
     ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'view' THEN 2 ELSE 3 END, name`,
  );
  return header("sqlite") + rows.map((r) => `\n-- ${r.type} ${r.name}\n${r.sql.trim()};\n`).join("");
}

export async function dumpPostgresSchema(sql: Sql): Promise<string> {
  const out: string[] = [];
  type Column = { table_name: string; column_name: string; type: string; nullable: string; extra: string | null };
  const columns = await sql<Column>(
    `SELECT c.table_name, c.column_name, format_type(a.atttypid, a.atttypmod) AS type, c.is_nullable AS nullable,
       CASE WHEN c.is_identity = 'YES' THEN 'GENERATED ' || c.identity_generation || ' AS IDENTITY'
         WHEN c.is_generated = 'ALWAYS' THEN 'GENERATED ALWAYS AS (' || c.generation_expression || ') STORED'
         WHEN c.column_default IS NOT NULL THEN 'DEFAULT ' || c.column_default END AS extra
     FROM information_schema.columns c
     JOIN pg_attribute a ON a.attrelid = (quote_ident(c.table_schema) || '.' || quote_ident(c.table_name))::regclass
       AND a.attname = c.column_name
     WHERE c.table_schema = 'public' ORDER BY c.table_name, c.ordinal_position`,
  );
  const constraints = await sql<{ table_name: string; name: string; def: string }>(
    `SELECT cl.relname AS table_name, co.conname AS name, pg_get_constraintdef(co.oid) AS def
     FROM pg_constraint co JOIN pg_class cl ON cl.oid = co.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
     WHERE n.nspname = 'public' ORDER BY cl.relname, co.conname`,
  );
  const tables = [...new Set(columns.map((c) => c.table_name))].sort();
  for (const table of tables) {
    const lines = columns
      .filter((c) => c.table_name === table)
      .map(
        (c) =>
          `  ${c.column_name} ${c.type}${c.nullable === "NO" ? " NOT NULL" : ""}${c.extra !== null ? ` ${c.extra}` : ""}`,
      );
    for (const k of constraints.filter((x) => x.table_name === table)) lines.push(`  CONSTRAINT ${k.name} ${k.def}`);
    out.push(`\n-- table ${table}\nCREATE TABLE ${table} (\n${lines.join(",\n")}\n);\n`);
  }
  const indexes = await sql<{ name: string; def: string }>(
    `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'public'
       AND indexname NOT IN (SELECT conname FROM pg_constraint) ORDER BY indexname`,
  );
  for (const i of indexes) out.push(`\n-- index ${i.name}\n${i.def};\n`);
  const functions = await sql<{ name: string; def: string }>(
    `SELECT p.proname AS name, pg_get_functiondef(p.oid) AS def FROM pg_proc p
       JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e') ORDER BY p.proname`,
  );
  for (const f of functions) out.push(`\n-- function ${f.name}\n${f.def.trim()};\n`);
  const triggers = await sql<{ name: string; def: string }>(
    `SELECT t.tgname AS name, pg_get_triggerdef(t.oid) AS def FROM pg_trigger t
       JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND NOT t.tgisinternal ORDER BY t.tgname`,
  );
  for (const t of triggers) out.push(`\n-- trigger ${t.name}\n${t.def};\n`);
  return header("postgres") + out.join("");
}

/** A `pg` pool or client as a raw SQL runner. */
export const sqlOf =
  (client: pg.Pool | pg.Client): Sql =>
  async <R>(text: string, values: unknown[] = []) =>
    (await client.query(text, values)).rows as R[];

/** A better-sqlite3 connection as a raw SQL runner (queries without parameters are all the dump needs). */
export const sqliteSqlOf =
  (db: Database.Database): Sql =>
  async <R>(text: string) =>
    db.prepare(text).all() as R[];
