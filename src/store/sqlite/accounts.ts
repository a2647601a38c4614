import { ACCOUNT_PATCH_COLUMNS, type AccountQueries, patchColumns } from "../adapter-parts.js";
import type { Account } from "../store.js";
import type { SqliteContext } from "./context.js";
import { ACCOUNT_COLUMNS, type AccountRow, accountFromRow, accountParams } from "./rows.js";

export function accountQueries(ctx: SqliteContext): AccountQueries {
  const { db } = ctx;
  const byId = db.prepare("SELECT * FROM accounts WHERE id = ?");
  const byToken = db.prepare("SELECT * FROM accounts WHERE token = @token OR read_only_token = @token");
  // rowid breaks ties in insertion order: accounts created in the same millisecond (a pinned test clock, the CLI
  // right after the first start) must not make another account the default one.
  const first = db.prepare("SELECT * FROM accounts ORDER BY created_at, rowid LIMIT 1");
  const insert = prepareAccountInsert(db);
  const rotate = db.prepare(
    "UPDATE accounts SET current_signing_key = next_signing_key, next_signing_key = ? WHERE id = ? RETURNING *",
  );
  const get = (row: unknown): Account | undefined => (row ? accountFromRow(row as AccountRow) : undefined);

  return {
    accountInsert: ({ account }) => ctx.write(() => void insert.run(accountParams(account))),
    // One writer: the check and the insert in one write are atomic.
    accountInsertDefault: ({ account }) =>
      ctx.write(() => {
        if (first.get()) return false;
        insert.run(accountParams(account));
        return true;
      }),
    accountUpdate: ({ id, patch }) =>
      ctx.write(() => {
        const entries = patchColumns(patch, ACCOUNT_PATCH_COLUMNS);
        const sets = entries.map(([column]) => `${column} = ?`);
        const values = entries.map(([, v]) => (typeof v === "boolean" ? (v ? 1 : 0) : v));
        const row =
          sets.length === 0
            ? byId.get(id)
            : db.prepare(`UPDATE accounts SET ${sets.join(", ")} WHERE id = ? RETURNING *`).get(...values, id);
        if (!row) throw new Error(`account ${id} not found`);
        return accountFromRow(row as AccountRow);
      }),
    accountGet: async ({ id }) => get(byId.get(id)),
    accountGetByToken: async ({ token }) => get(byToken.get({ token })),
    accountFirst: async () => get(first.get()),
    accountRotateKeys: ({ id, next }) =>
      ctx.write(() => {
        const row = rotate.get(next, id);
        if (!row) throw new Error(`account ${id} not found`);
        return accountFromRow(row as AccountRow);
      }),
  };
}

/** Shared with customer creation, which inserts a customer and its first account in one transaction. */
export function prepareAccountInsert(db: SqliteContext["db"]) {
  const columns = ACCOUNT_COLUMNS.join(", ");
  return db.prepare(`INSERT INTO accounts (${columns}) VALUES (${ACCOUNT_COLUMNS.map((c) => `@${c}`).join(", ")})`);
}
