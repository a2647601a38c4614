import { writesAccounts } from "../account-writes.js";
import { combineParts } from "../adapter-parts.js";
import type { Store } from "../store.js";
import { accountQueries } from "./accounts.js";
import { ACCOUNTS_CHANNEL, DUE_CHANNEL, openPgContext, type PgStoreOptions } from "./context.js";
import { customerQueries } from "./customers.js";
import { dlqQueries } from "./dlq.js";
import { flowControlQueries } from "./flow-control-queries.js";
import { logQueries } from "./logs.js";
import { messageQueries } from "./messages.js";
import { messageRowQueries } from "./message-rows.js";
import { messageActionQueries } from "./message-actions.js";
import { migrateWhenReachable } from "./migrate.js";
import { ChannelListener } from "./notify.js";
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
import { healthQueries } from "./health.js";
import { workflowQueries } from "./workflows.js";
import { withWriteRelay } from "./relay/index.js";

export type { PgStoreOptions } from "./context.js";

/** How long an account write waits for its own `ferry_accounts` notification to come back (see below). */
const ACCOUNT_ECHO_TIMEOUT_MS = 2000;

/**
 * The multi-node store: a `pg` pool, writes through group commit (write-batcher.ts), leases claimed with
 * FOR UPDATE SKIP LOCKED, and LISTEN/NOTIFY on `ferry_due` (wake the other nodes) and `ferry_accounts` (their
 * account caches are stale). Several Ferry processes may share one database. `migrate()` applies the numbered
 * migrations under an advisory lock.
 */
export function openPostgresStore(options: PgStoreOptions): Store {
  const ctx = openPgContext(options);
  // `ferry_due` last: the LISTEN connection's last statement tells an observer (the tests) it is fully set up.
  const listener = new ChannelListener(ctx.options, [ACCOUNTS_CHANNEL, DUE_CHANNEL], options.log);
  let startRelay = () => {};
  const store: Store = {
    capabilities: { singleNode: false },
    migrate: async () => {
      await migrateWhenReachable(ctx.pool, {
        log: options.log,
        waitMs: options.startWaitMs ?? 30_000,
        connectionString: options.connectionString,
      });
      startRelay(); // relay_leader exists from here on (migration 071)
    },
    close: async () => {
      await listener.close();
      await ctx.close();
    },
    subscribeDue: (onDue) => listener.subscribe(DUE_CHANNEL, onDue),
    subscribeAccountChanges: (onChange) => listener.subscribe(ACCOUNTS_CHANNEL, onChange),
    ...combineParts(ctx, [accountQueries, messageQueries, logQueries, dlqQueries, scheduleQueries, topicQueries]),
    ...combineParts(ctx, [queueQueries, flowControlQueries, customerQueries, searchIndexQueries, usageQueries]),
    ...combineParts(ctx, [searchDocumentQueries, retentionQueries, nodeNumberQueries, opsQueries, overviewQueries]),
    ...combineParts(ctx, [workflowQueries]),
    ...combineParts(ctx, [messageRowQueries]),
    ...combineParts(ctx, [healthQueries]),
    ...combineParts(ctx, [messageActionQueries]),
  };
  const echoed = withAccountEcho(store, listener, () =>
    ctx.pool.query(`SELECT pg_notify('${ACCOUNTS_CHANNEL}', '')`).then(() => undefined),
  );
  if (options.relay === undefined) return echoed;
  const relay = withWriteRelay(echoed, {
    connection: ctx.options,
    ...(options.relay.host !== undefined ? { host: options.relay.host } : {}),
    ...(options.log ? { log: options.log } : {}),
    query: (sql, values) => ctx.query(sql, values),
  });
  startRelay = relay.start;
  return relay.store;
}

/**
 * An account write resolves only once this node's own LISTEN connection got a `ferry_accounts` notification sent
 * after it committed: PostgreSQL delivers notifications in commit order and to every listener alike, so the other
 * nodes have theirs too, and a token rotated through this node is refused by them at their next request, not some
 * milliseconds later. The notification is sent explicitly (one round trip per account write, which are rare): a call
 * that changed nothing would otherwise wait for one that never comes. The trigger of migration 010 still tells the
 * nodes of writes made elsewhere (the CLI). Bounded: with the LISTEN connection down the write answers after the
 * timeout (the other nodes' caches are cleared when their own connection comes back).
 */
function withAccountEcho(store: Store, listener: ChannelListener, notify: () => Promise<void>): Store {
  const methods = store as unknown as Record<string, unknown>;
  for (const [name, method] of Object.entries(methods)) {
    if (typeof method !== "function" || !writesAccounts(name)) continue;
    const call = method as (params: unknown) => Promise<unknown>;
    methods[name] = async (params: unknown) => {
      if (store.subscribeAccountChanges && !listener.listening) {
        // The first account write of a node opens the LISTEN connection, so it can see its echo.
        store.subscribeAccountChanges(() => {});
      }
      const result = await call(params);
      const seen = listener.count(ACCOUNTS_CHANNEL);
      const sent = await notify().then(
        () => true,
        () => false, // the write committed; other nodes learn of it when their LISTEN connection is back
      );
      if (sent) await listener.waitBeyond(ACCOUNTS_CHANNEL, seen, ACCOUNT_ECHO_TIMEOUT_MS);
      return result;
    };
  }
  return store;
}
