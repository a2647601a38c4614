import { createRequire } from "node:module";
import type Database from "better-sqlite3";

// Apart from search-documents.ts, which needs the connection's context: context.ts loads these into every
// connection, and the two importing each other would be a circle (test/unit/import-cycles.test.ts).

/** Loads sqlite-vec's scalar vector functions into a connection (before migrations: nothing in them needs it). */
export function loadVectorFunctions(db: Database.Database): void {
  // sqlite-vec ships CommonJS with a prebuilt loadable extension per platform.
  const require = createRequire(import.meta.url);
  (require("sqlite-vec") as { load(db: Database.Database): void }).load(db);
}
