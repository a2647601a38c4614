import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgresStore, type PgStoreOptions } from "../../src/store/postgres/index.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { Store } from "../../src/store/store.js";
import { freshDatabase, postgresAvailable } from "../helpers/postgres.js";

/** Every adapter the conformance suite runs against; each call gives a fresh, empty database. */
export interface AdapterFactory {
  name: string;
  open(): Promise<{ store: Store; dispose(): Promise<void> }>;
}

/** A PostgreSQL store on a fresh database; `more()` opens further stores (other "nodes") on the same database. */
export async function openPostgresTestStores(options: Partial<PgStoreOptions> = {}) {
  const db = await freshDatabase();
  const opened: Store[] = [];
  const more = async () => {
    const store = openPostgresStore({ connectionString: db.url, poolSize: 4, ...options });
    await store.migrate();
    opened.push(store);
    return store;
  };
  const store = await more();
  return {
    store,
    url: db.url,
    more,
    dispose: async () => {
      for (const s of opened) await s.close();
      await db.drop();
    },
  };
}

export const adapters: AdapterFactory[] = [
  {
    name: "sqlite",
    open: async () => {
      const dir = mkdtempSync(join(tmpdir(), "ferry-store-"));
      const store = openSqliteStore({ path: join(dir, "ferry.db"), synchronous: "NORMAL" });
      await store.migrate();
      return {
        store,
        dispose: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  ...(postgresAvailable() ? [{ name: "postgres", open: () => openPostgresTestStores() }] : []),
];
