import type { Logger } from "pino";
import type { Config } from "../config.js";
import { openPostgresStore } from "./postgres/index.js";
import { openSqliteStore } from "./sqlite/index.js";
import { lockSqliteFile } from "./sqlite/process-lock.js";
import type { Store } from "./store.js";
import { withAccountCache } from "./thread/account-cache.js";
import { openStoreThread } from "./thread/proxy.js";

/** `DATABASE_URL` chooses the adapter: `sqlite:<path>` (default) or `postgres://…` (several nodes). */
export async function openStore(
  config: Pick<Config, "databaseUrl" | "sqliteSynchronous" | "pgPoolSize" | "pollIntervalMs"> &
    Partial<Pick<Config, "databaseWaitMs">>,
  options: { log?: Logger } = {},
): Promise<Store> {
  const url = config.databaseUrl;
  if (url.startsWith("sqlite:")) {
    return openSqliteStore({ path: url.slice("sqlite:".length), synchronous: config.sqliteSynchronous });
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    return openPostgresStore({
      connectionString: url,
      poolSize: config.pgPoolSize,
      // A message due before the other nodes' next poll is worth a NOTIFY; later ones their poll finds.
      notifyHorizonMs: config.pollIntervalMs,
      ...(config.databaseWaitMs !== undefined ? { startWaitMs: config.databaseWaitMs } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  }
  throw new Error(`config error: DATABASE_URL ${url.split(":")[0]} is not supported`);
}

/**
 * The server's store: the adapter in its own thread behind a proxy when `FERRY_STORE_THREAD=on`, else in this thread, with the
 * main-thread account cache in front (docs/threading.md).
 */
export async function openServerStore(config: Config, options: { log: Logger; now: number }): Promise<Store> {
  // One process per SQLite file (src/store/sqlite/process-lock.ts): taken before anything is read or migrated.
  const lock = config.databaseUrl.startsWith("sqlite:")
    ? lockSqliteFile(config.databaseUrl.slice("sqlite:".length), options.now)
    : undefined;
  try {
    const store = config.storeThread ? await openStoreThread(config, options.log) : await openStore(config, options);
    if (lock) {
      const close = store.close.bind(store);
      store.close = async () => {
        try {
          await close();
        } finally {
          lock.release();
        }
      };
    }
    return withAccountCache(store);
  } catch (error) {
    lock?.release();
    throw error;
  }
}
