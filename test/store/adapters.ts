import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { openPostgresStore, type PgStoreOptions } from "../../src/store/postgres/index.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { Store } from "../../src/store/store.js";
import { freshDatabase, postgresAvailable } from "../helpers/postgres.js";

/**
 * The one list of storage adapters every store test runs against (test/store/*.test.ts): each `open()` gives a
 * fresh, empty, migrated database with one store on it, further stores ("nodes") on the same database, and raw SQL
 * access behind the stores' back. Build accounts and messages with ./factories.ts.
 */
export interface OpenedStore {
  dialect: "sqlite" | "postgres";
  /** The first node, migrated. */
  store: Store;
  /** Opens (and migrates) one more store on the same database: another node. */
  more(): Promise<Store>;
  /**
   * Raw SQL on the database, outside every store (its own connection): `$1, $2…` placeholders on both dialects.
   * Returns the rows of a query, [] for a statement without rows.
   */
  sql<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  /** SQLite: the database file; PostgreSQL: the connection URL. */
  location: string;
  dispose(): Promise<void>;
}

export interface AdapterFactory {
  name: "sqlite" | "postgres";
  open(options?: AdapterOptions): Promise<OpenedStore>;
}

/** Options passed to every store the factory opens, by dialect (the other dialect's are ignored). */
export interface AdapterOptions {
  sqlite?: Partial<Parameters<typeof openSqliteStore>[0]>;
  postgres?: Partial<PgStoreOptions>;
  /** PostgreSQL: the cluster to create the database on (default: the test run's, test/helpers/postgres.ts). */
  adminUrl?: string;
  /** PostgreSQL: leave the first store unmigrated (tests of the migrations themselves; SQLite migrates at open). */
  migrate?: boolean;
}

/** better-sqlite3 has no `$1` placeholders: each `$n` becomes a `?` bound to the n-th value. */
function sqlitePositional(text: string, values: unknown[]): [string, unknown[]] {
  const args: unknown[] = [];
  const converted = text.replace(/\$(\d+)/g, (_, n: string) => {
    args.push(values[Number(n) - 1]);
    return "?";
  });
  return [converted, args];
}

/** Opens the nodes of one database: `open(migrate)` opens one more store; `closeAll` closes every one opened. */
function nodesOf(openStore: () => Store) {
  const opened: Store[] = [];
  const open = async (migrate: boolean) => {
    const store = openStore();
    if (migrate) await store.migrate();
    opened.push(store);
    return store;
  };
  const closeAll = async () => {
    for (const s of opened) await s.close();
  };
  return { open, closeAll };
}

export async function openSqliteTestStores(options: AdapterOptions = {}): Promise<OpenedStore> {
  const dir = mkdtempSync(join(tmpdir(), "ferry-store-"));
  const path = join(dir, "ferry.db");
  const { open, closeAll } = nodesOf(() => openSqliteStore({ path, synchronous: "NORMAL", ...options.sqlite }));
  const store = await open(options.migrate !== false);
  let raw: Database.Database | undefined;
  return {
    dialect: "sqlite",
    store,
    more: () => open(true),
    sql: async <R>(text: string, values: unknown[] = []) => {
      raw ??= new Database(path, { timeout: 10_000 });
      const [converted, args] = sqlitePositional(text, values);
      const statement = raw.prepare(converted);
      if (statement.reader) return statement.all(...args) as R[];
      statement.run(...args);
      return [];
    },
    location: path,
    dispose: async () => {
      raw?.close();
      await closeAll();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A PostgreSQL store on a fresh database; `more()` opens further stores (other "nodes") on the same database. */
export async function openPostgresTestStores(options: AdapterOptions = {}): Promise<OpenedStore & { url: string }> {
  const db = await freshDatabase(options.adminUrl);
  const { open, closeAll } = nodesOf(() =>
    openPostgresStore({ connectionString: db.url, poolSize: 4, ...options.postgres }),
  );
  const store = await open(options.migrate !== false);
  let raw: pg.Pool | undefined;
  return {
    dialect: "postgres",
    store,
    more: () => open(true),
    sql: async <R>(text: string, values: unknown[] = []) => {
      if (!raw) {
        raw = new pg.Pool({ connectionString: db.url, max: 4 });
        // pool.end() resolves before its sockets are closed; dropping the database then cuts them on purpose.
        raw.on("error", () => {});
        raw.on("connect", (client) => client.on("error", () => {}));
      }
      return (await raw.query(text, values)).rows as R[];
    },
    location: db.url,
    url: db.url,
    dispose: async () => {
      await raw?.end();
      await closeAll();
      await db.drop();
    },
  };
}

export const adapters: AdapterFactory[] = [
  { name: "sqlite", open: openSqliteTestStores },
  ...(postgresAvailable() ? [{ name: "postgres" as const, open: openPostgresTestStores }] : []),
];
