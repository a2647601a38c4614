import { type MessageActionStore, storedMessage } from "../message-action-store.js";
import type { PgContext } from "./context.js";
import { dlqWhere } from "./dlq.js";
import { messageInserter } from "./messages.js";
import { type MessageRow, messageFromRow } from "./rows.js";

/** The console's actions on one message (src/store/message-action-store.ts) on PostgreSQL. */
export function messageActionQueries(ctx: PgContext): MessageActionStore {
  const insertNew = messageInserter(ctx);
  return {
    // Any state: a kept, ended row is what a replay of a delivered or failed message reads (docs/states.md).
    messageStoredGet: async ({ accountId, id }) => {
      const [row] = await ctx.query<MessageRow & { replay_of: string | null }>(
        { name: "ferry_message_stored_get", text: "SELECT * FROM messages WHERE id = $1 AND account_id = $2" },
        [id, accountId],
      );
      return row ? storedMessage(messageFromRow(row), row.state, row.replay_of) : undefined;
    },

    messageReplayList: async ({ accountId, id, limit }) => {
      const rows = await ctx.query<{ id: string; created_at: string | number }>(
        {
          name: "ferry_message_replays",
          text: "SELECT id, created_at FROM messages WHERE account_id = $1 AND replay_of = $2 ORDER BY seq LIMIT $3",
        },
        [accountId, id, limit],
      );
      return rows.map((r) => ({ messageId: r.id, createdAt: Number(r.created_at) }));
    },

    messageReplayInsert: ({ item, replayOf, now, dedupWindowMs }) =>
      ctx.write(async (tx) => {
        const [result] = await insertNew(tx, [item], now, dedupWindowMs);
        if (!result!.deduplicated) {
          await tx.execute("UPDATE messages SET replay_of = $1 WHERE id = $2", [replayOf, result!.messageId]);
        }
        // Other nodes claim it too: wake them (the inserting node is nudged by the service).
        tx.notifyDue();
        return result!;
      }),

    messageRetryNow: ({ accountId, id, now }) =>
      ctx.write(async (tx) => {
        const changed = await tx.execute(
          "UPDATE messages SET due_at = $1 WHERE id = $2 AND account_id = $3 AND state = 'RETRY' AND due_at > $1",
          [now, id, accountId],
        );
        if (changed > 0) tx.notifyDue();
        return changed > 0;
      }),

    dlqCount: async ({ accountId, filter }) => {
      const { params, where } = dlqWhere(accountId, filter);
      const [row] = await ctx.query<{ n: string }>(`SELECT count(*) AS n FROM dlq WHERE ${where}`, params.values);
      return Number(row!.n);
    },
  };
}
