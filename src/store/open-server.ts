import type { Logger } from "pino";
import type { Config } from "../config.js";
import { openStore } from "./open.js";
import { lockSqliteFile } from "./sqlite/process-lock.js";
import type { Store } from "./store.js";
import { withAccountCache } from "./thread/account-cache.js";
import { openStoreThread } from "./thread/proxy.js";

// Apart from open.ts because the store thread opens its adapter with `openStore`: one file importing both would
// make store/thread and open.ts import each other (test/unit/import-cycles.test.ts).
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
    const store = config.storeThread ? await openStoreThread(config, options.log) : await openStore(config, { log: options.log, serving: true });
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
