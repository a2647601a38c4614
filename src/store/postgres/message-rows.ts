import type { MessageListState } from "../../domain/message-list-state.js";
import {
  MESSAGE_ROW_COLUMNS,
  type MessageRowFilter,
  type MessageRowRow,
  type MessageRowStore,
  messageRowPage,
} from "../message-row-store.js";
import type { PgContext } from "./context.js";
import { andAll, filterSql, Params } from "./filters.js";

/**
 * A list state (src/domain/message-list-state.ts, `messageListState`) as a condition on the row; `now` is the
 * placeholder of the list's time for the two that read the delay. A HELD row shows how it ended.
 */
const LIST_STATE_SQL: Record<MessageListState, (now: () => string) => string> = {
  CREATED: (now) => `(state = 'CREATED' AND due_at <= ${now()})`,
  DELAYED: (now) => `(state = 'CREATED' AND due_at > ${now()})`,
  QUEUED: () => "state = 'QUEUED'",
  FLOW_CONTROL: () => "state = 'WAITING'",
  ACTIVE: () => "state = 'ACTIVE'",
  RETRY: () => "state = 'RETRY'",
  DELIVERED: () => "(state = 'DELIVERED' OR (state = 'HELD' AND outcome = 'DELIVERED'))",
  FAILED: () => "(state = 'FAILED' OR (state = 'HELD' AND outcome = 'FAILED'))",
  CANCELED: () => "(state = 'CANCELED' OR (state = 'HELD' AND outcome = 'CANCELED'))",
};

/** One row per message (src/store/message-row-store.ts), by arrival through `messages_account`. */
export function messageRowQueries(ctx: PgContext): MessageRowStore {
  return {
    messageRowList: async ({ accountId, filter, cursor, count, order, now }) => {
      const params = new Params();
      const { listState, ...common }: MessageRowFilter = filter;
      const where = filterSql(common, { time: "created_at", idColumn: "id" }, params);
      if (listState && listState.length > 0) {
        let placeholder: string | undefined;
        const at = () => (placeholder ??= params.add(now));
        where.push(`(${listState.map((s) => LIST_STATE_SQL[s](at)).join(" OR ")})`);
      }
      const desc = order === "latestFirst";
      if (cursor !== undefined) where.push(`seq ${desc ? "<" : ">"} ${params.add(Number(cursor))}`);
      const rows = await ctx.query<MessageRowRow>(
        `SELECT ${MESSAGE_ROW_COLUMNS}, octet_length(body) AS body_size FROM messages
          WHERE account_id = ${params.add(accountId)}${andAll(where)}
          ORDER BY seq ${desc ? "DESC" : "ASC"} LIMIT ${params.add(count + 1)}`,
        params.values,
      );
      return messageRowPage(rows, count);
    },
  };
}
