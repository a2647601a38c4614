import type { CustomerQueries } from "../adapter-parts.js";
import { type CustomerRow, customerFromRow as fromRow } from "../rows-shared.js";
import { prepareAccountInsert } from "./accounts.js";
import type { SqliteContext } from "./context.js";
import { type AccountRow, accountFromRow, accountParams } from "./rows.js";

export function customerQueries(ctx: SqliteContext): CustomerQueries {
  const { db } = ctx;
  const insert = db.prepare(
    "INSERT INTO customers (email, api_key_hash, created_at) VALUES (?, ?, ?) ON CONFLICT (email) DO NOTHING",
  );
  const insertAccount = prepareAccountInsert(db);
  const byEmail = db.prepare("SELECT * FROM customers WHERE email = ?");
  const first = db.prepare("SELECT * FROM customers ORDER BY created_at, rowid LIMIT 1");
  const setHash = db.prepare("UPDATE customers SET api_key_hash = ? WHERE email = ?");
  const rename = db.prepare("UPDATE customers SET email = ? WHERE email = ?");
  const moveAccounts = db.prepare("UPDATE accounts SET customer_id = ? WHERE customer_id = ?");
  const moveIndexes = db.prepare("UPDATE search_indexes SET customer_id = ? WHERE customer_id = ?");
  const accountsOf = db.prepare("SELECT * FROM accounts WHERE customer_id = ? ORDER BY created_at, rowid");

  return {
    customerInsert: ({ customer, account }) =>
      ctx.write(() => {
        const inserted = insert.run(customer.email, customer.apiKeyHash, customer.createdAt).changes === 1;
        if (inserted && account) insertAccount.run(accountParams(account));
        return inserted;
      }),

    customerGet: async ({ email }) => {
      const row = byEmail.get(email) as CustomerRow | undefined;
      return row ? fromRow(row) : undefined;
    },

    customerFirst: async () => {
      const row = first.get() as CustomerRow | undefined;
      return row ? fromRow(row) : undefined;
    },

    customerUpdate: ({ email, patch }) =>
      ctx.write(() => {
        if (patch.apiKeyHash !== undefined) setHash.run(patch.apiKeyHash, email);
        let current = email;
        if (patch.email !== undefined && patch.email !== email) {
          rename.run(patch.email, email);
          moveAccounts.run(patch.email, email);
          moveIndexes.run(patch.email, email);
          current = patch.email;
        }
        const row = byEmail.get(current) as CustomerRow | undefined;
        if (!row) throw new Error(`customer ${email} not found`);
        return fromRow(row);
      }),

    accountListByCustomer: async ({ customerId }) => (accountsOf.all(customerId) as AccountRow[]).map(accountFromRow),
  };
}
