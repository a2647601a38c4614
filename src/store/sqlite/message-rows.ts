import type { MessageListState } from "../../domain/message-list-state.js";
import {
  MESSAGE_ROW_COLUMNS,
  type MessageRowFilter,
  type MessageRowRow,
  type MessageRowStore,
  messageRowPage,
} from "../message-row-store.js";
import type { SqliteContext } from "./context.js";
import { filterSql } from "./filters.js";

/**
 * A list state (src/domain/message-list-state.ts, `messageListState`) as a condition on the row; `?` is `now` for
 * the two that read the delay. A HELD row shows how it ended.
 */
const LIST_STATE_SQL: Record<MessageListState, { sql: string; now?: true }> = {
  CREATED: { sql: "(state = 'CREATED' AND due_at <= ?)", now: true },
  DELAYED: { sql: "(state = 'CREATED' AND due_at > ?)", now: true },
  QUEUED: { sql: "state = 'QUEUED'" },
  FLOW_CONTROL: { sql: "state = 'WAITING'" },
  ACTIVE: { sql: "state = 'ACTIVE'" },
  RETRY: { sql: "state = 'RETRY'" },
  DELIVERED: { sql: "(state = 'DELIVERED' OR (state = 'HELD' AND outcome = 'DELIVERED'))" },
  FAILED: { sql: "(state = 'FAILED' OR (state = 'HELD' AND outcome = 'FAILED'))" },
  CANCELED: { sql: "(state = 'CANCELED' OR (state = 'HELD' AND outcome = 'CANCELED'))" },
};

function listStateSql(states: readonly MessageListState[], now: number): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const parts = states.map((s) => {
    const c = LIST_STATE_SQL[s];
    if (c.now) params.push(now);
    return c.sql;
  });
  return { sql: `(${parts.join(" OR ")})`, params };
}

/** One row per message (src/store/message-row-store.ts), by arrival through `messages_account`. */
export function messageRowQueries(ctx: SqliteContext): MessageRowStore {
  const { db } = ctx;
  return {
    messageRowList: async ({ accountId, filter, cursor, count, order, now }) => {
      const { listState, ...common }: MessageRowFilter = filter;
      const { where, params } = filterSql(common, { time: "created_at", idColumn: "id" });
      if (listState && listState.length > 0) {
        const c = listStateSql(listState, now);
        where.push(c.sql);
        params.push(...c.params);
      }
      const desc = order === "latestFirst";
      if (cursor !== undefined) {
        where.push(desc ? "seq < ?" : "seq > ?");
        params.push(Number(cursor));
      }
      const rows = db
        .prepare(
          `SELECT ${MESSAGE_ROW_COLUMNS}, length(body) AS body_size FROM messages WHERE account_id = ?
           ${where.map((w) => `AND ${w}`).join(" ")} ORDER BY seq ${desc ? "DESC" : "ASC"} LIMIT ?`,
        )
        .all(accountId, ...params, count + 1) as MessageRowRow[];
      return messageRowPage(rows, count);
    },
  };
}
