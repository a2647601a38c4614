import type { Config } from "../config.js";
import { openSqliteStore } from "./sqlite/index.js";
import type { Store } from "./store.js";

/** `DATABASE_URL` chooses the adapter: `sqlite:<path>` (default) or `postgres://…`. */
export async function openStore(config: Pick<Config, "databaseUrl" | "sqliteSynchronous">): Promise<Store> {
  const url = config.databaseUrl;
  if (url.startsWith("sqlite:")) {
    return openSqliteStore({ path: url.slice("sqlite:".length), synchronous: config.sqliteSynchronous });
  }
  throw new Error(`config error: DATABASE_URL ${url.split(":")[0]} is not supported yet`);
}
