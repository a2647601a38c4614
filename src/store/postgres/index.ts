import type { Store } from "../store.js";
import { accountQueries } from "./accounts.js";
import { openPgContext, type PgStoreOptions } from "./context.js";
import { customerQueries } from "./customers.js";
import { dlqQueries } from "./dlq.js";
import { flowControlQueries } from "./flow-control-queries.js";
import { logQueries } from "./logs.js";
import { messageQueries } from "./messages.js";
import { migrateWhenReachable } from "./migrate.js";
import { DueListener } from "./notify.js";
import { scheduleQueries } from "./schedules.js";
import { searchIndexQueries } from "./search-indexes.js";
import { usageQueries } from "./usage-stats.js";

export type { PgStoreOptions } from "./context.js";

/**
 * The multi-node store: a `pg` pool, writes through group commit (write-batcher.ts), leases claimed with
 * FOR UPDATE SKIP LOCKED, and LISTEN/NOTIFY on `ferry_due` to wake the other nodes. Several Ferry processes may
 * share one database. `migrate()` applies the numbered migrations under an advisory lock.
 */
export function openPostgresStore(options: PgStoreOptions): Store {
  const ctx = openPgContext(options);
  const listener = new DueListener(ctx.options, options.log);
  const store: Partial<Store> = {
    capabilities: { singleNode: false },
    migrate: () => migrateWhenReachable(ctx.pool, options.log),
    close: async () => {
      await listener.close();
      await ctx.close();
    },
    subscribeDue: (onDue) => listener.subscribe(onDue),
    ...accountQueries(ctx),
    ...messageQueries(ctx),
    ...logQueries(ctx),
    ...customerQueries(ctx),
    ...searchIndexQueries(ctx),
    ...usageQueries(ctx),
    ...scheduleQueries(ctx),
    ...dlqQueries(ctx),
    ...flowControlQueries(ctx),
  };
  return complete(store);
}

/**
 * The capability methods (DLQ, URL groups and queues, schedules, flow control, management) are being ported from the
 * SQLite adapter; until every one is here, a call to a missing method fails loudly instead of being undefined.
 */
function complete(store: Partial<Store>): Store {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (value !== undefined || typeof name !== "string" || name === "then") return value;
      return () => Promise.reject(new Error(`${name} is not implemented on PostgreSQL yet`));
    },
  }) as Store;
}
