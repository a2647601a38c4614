import type { SqliteSynchronous } from "../../config.js";
import { combineParts } from "../adapter-parts.js";
import type { Store } from "../store.js";
import { accountQueries } from "./accounts.js";
import { openSqlite } from "./context.js";
import { dlqQueries } from "./dlq.js";
import { flowControlQueries } from "./flow-control-queries.js";
import { logQueries } from "./logs.js";
import { messageQueries } from "./messages.js";
import { messageRowQueries } from "./message-rows.js";
import { messageActionQueries } from "./message-actions.js";
import { scheduleQueries } from "./schedules.js";
import { nodeNumberQueries } from "./node-numbers.js";
import { queueQueries } from "./queues.js";
import { retentionQueries } from "./retention.js";
import { topicQueries } from "./topics.js";
import { customerQueries } from "./customers.js";
import { searchIndexQueries } from "./search-indexes.js";
import { searchDocumentQueries } from "./search-documents.js";
import { usageQueries } from "./usage-stats.js";
import { opsQueries } from "./ops.js";
import { overviewQueries } from "./overview.js";
import { healthQueries } from "./health.js";
import { workflowQueries } from "./workflows.js";

/**
 * The embedded default store: one better-sqlite3 connection in WAL mode, every write through group commit.
 * Migrations run when the file is opened, before any statement is prepared.
 */
export function openSqliteStore(p: { path: string; synchronous: SqliteSynchronous }): Store {
  const ctx = openSqlite(p.path, p.synchronous);
  return {
    capabilities: { singleNode: true },
    migrate: async () => {},
    close: async () => ctx.close(),
    ...combineParts(ctx, [accountQueries, messageQueries, logQueries, dlqQueries, scheduleQueries, topicQueries]),
    ...combineParts(ctx, [queueQueries, flowControlQueries, customerQueries, searchIndexQueries, usageQueries]),
    ...combineParts(ctx, [searchDocumentQueries, retentionQueries, nodeNumberQueries, opsQueries, overviewQueries]),
    ...combineParts(ctx, [workflowQueries]),
    ...combineParts(ctx, [messageRowQueries]),
    ...combineParts(ctx, [healthQueries]),
    ...combineParts(ctx, [messageActionQueries]),
  };
}
