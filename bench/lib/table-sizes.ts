import Database from "better-sqlite3";
import { loadVectorFunctions } from "../../src/store/sqlite/vector-functions.js";

export interface TableSize {
  table: string;
  rows: number;
  /** Bytes of the table and its indexes (SQLite's dbstat), when the build has it. */
  bytes?: number;
}

/**
 * Rows and bytes of every table of a SQLite file, read through a second, read-only connection while Ferry runs
 * (WAL lets a reader in beside the writer). Indexes count towards their table.
 */
export function sqliteTableSizes(path: string): TableSize[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  // The search tables include sqlite-vec's virtual tables: reading them (and dbstat over them) needs the module.
  loadVectorFunctions(db);
  try {
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {
        name: string;
      }[]
    ).map((t) => t.name);
    const bytes = new Map<string, number>();
    try {
      const rows = db
        .prepare(
          `SELECT coalesce(m.tbl_name, s.name) AS tbl, sum(s.pgsize) AS bytes
           FROM dbstat s LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY tbl`,
        )
        .all() as { tbl: string; bytes: number }[];
      for (const r of rows) bytes.set(r.tbl, r.bytes);
    } catch {
      // built without dbstat: rows only
    }
    return tables.map((table) => {
      const rows = (db.prepare(`SELECT count(*) AS n FROM "${table.replaceAll('"', '""')}"`).get() as { n: number }).n;
      const b = bytes.get(table);
      return b === undefined ? { table, rows } : { table, rows, bytes: b };
    });
  } finally {
    db.close();
  }
}
