import type { Logger } from "pino";
import type { Config } from "../config.js";
import { openPostgresStore } from "./postgres/index.js";
import { openSqliteStore } from "./sqlite/index.js";
import type { Store } from "./store.js";

/** `DATABASE_URL` chooses the adapter: `sqlite:<path>` (default) or `postgres://…` (several nodes). */
export async function openStore(
  config: Pick<Config, "databaseUrl" | "sqliteSynchronous" | "pgPoolSize" | "pollIntervalMs"> &
    Partial<Pick<Config, "databaseWaitMs" | "pgGatherMs" | "pgRelay" | "pgRelayHost">>,
  /** `serving`: the store of a running server, which takes part in the write relay; the CLI's writes alone. */
  options: { log?: Logger; serving?: boolean } = {},
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
      ...(config.pgGatherMs !== undefined ? { gatherMs: config.pgGatherMs } : {}),
      ...(options.serving === true && config.pgRelay === true
        ? { relay: config.pgRelayHost !== undefined ? { host: config.pgRelayHost } : {} }
        : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  }
  throw new Error(`config error: DATABASE_URL ${url.split(":")[0]} is not supported`);
}
