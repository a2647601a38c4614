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
import { nodeNumberQueries } from "./node-numbers.js";
import { queueQueries } from "./queues.js";
import { retentionQueries } from "./retention.js";
import { topicQueries } from "./topics.js";
import { scheduleQueries } from "./schedules.js";
import { searchIndexQueries } from "./search-indexes.js";
import { searchDocumentQueries } from "./search-documents.js";
import { usageQueries } from "./usage-stats.js";
import { opsQueries } from "./ops.js";
import { overviewQueries } from "./overview.js";

export type { PgStoreOptions } from "./context.js";

/**
 * The multi-node store: a `pg` pool, writes through group commit (write-batcher.ts), leases claimed with
 * FOR UPDATE SKIP LOCKED, and LISTEN/NOTIFY on `ferry_due` to wake the other nodes. Several Ferry processes may
 * share one database. `migrate()` applies the numbered migrations under an advisory lock.
 */
export function openPostgresStore(options: PgStoreOptions): Store {
  const ctx = openPgContext(options);
  const listener = new DueListener(ctx.options, options.log);
  return {
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
    ...topicQueries(ctx),
    ...queueQueries(ctx),
    ...customerQueries(ctx),
    ...searchIndexQueries(ctx),
    ...searchDocumentQueries(ctx),
    ...usageQueries(ctx),
    ...retentionQueries(ctx),
    ...nodeNumberQueries(ctx),
    ...overviewQueries(ctx),
    ...scheduleQueries(ctx),
    ...dlqQueries(ctx),
    ...flowControlQueries(ctx),
    ...opsQueries(ctx),
  };
}
