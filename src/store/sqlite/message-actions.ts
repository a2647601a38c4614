import { type MessageActionStore, storedMessage } from "../message-action-store.js";
import type { SqliteContext } from "./context.js";
import { dlqWhere } from "./dlq.js";
import { messageInserter } from "./messages.js";
import { type MessageRow, messageFromRow } from "./rows.js";

/** The console's actions on one message (src/store/message-action-store.ts) on SQLite. */
export function messageActionQueries(ctx: SqliteContext): MessageActionStore {
  const { db } = ctx;
  const insertNew = messageInserter(ctx);
  // Any state: a kept, ended row is what a replay of a delivered or failed message reads (docs/states.md).
  const get = db.prepare("SELECT * FROM messages WHERE id = ? AND account_id = ?");
  const replays = db.prepare(
    "SELECT id, created_at FROM messages WHERE account_id = ? AND replay_of = ? ORDER BY seq LIMIT ?",
  );
  const link = db.prepare("UPDATE messages SET replay_of = ? WHERE id = ?");
  const retryNow = db.prepare(
    "UPDATE messages SET due_at = ? WHERE id = ? AND account_id = ? AND state = 'RETRY' AND due_at > ?",
  );
  return {
    messageStoredGet: async ({ accountId, id }) => {
      const row = get.get(id, accountId) as (MessageRow & { replay_of: string | null }) | undefined;
      return row ? storedMessage(messageFromRow(row), row.state, row.replay_of) : undefined;
    },

    messageReplayList: async ({ accountId, id, limit }) =>
      (replays.all(accountId, id, limit) as { id: string; created_at: number }[]).map((r) => ({
        messageId: r.id,
        createdAt: r.created_at,
      })),

    messageReplayInsert: ({ item, replayOf, now, dedupWindowMs }) =>
      ctx.write(() => {
        const [result] = insertNew([item], now, dedupWindowMs);
        if (!result!.deduplicated) link.run(replayOf, result!.messageId);
        return result!;
      }),

    messageRetryNow: ({ accountId, id, now }) => ctx.write(() => retryNow.run(now, id, accountId, now).changes > 0),

    dlqCount: async ({ accountId, filter }) => {
      const { where, params } = dlqWhere(filter);
      const sql = `SELECT COUNT(*) AS n FROM dlq WHERE account_id = ? ${where.map((w) => `AND ${w}`).join(" ")}`;
      return (db.prepare(sql).get(accountId, ...params) as { n: number }).n;
    },
  };
}
