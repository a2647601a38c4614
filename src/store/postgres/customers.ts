import type { CustomerQueries } from "../adapter-parts.js";
import { type CustomerRow, customerFromRow as fromRow } from "../rows-shared.js";
import type { PgContext } from "./context.js";
import { type AccountRow, accountFromRow, accountValues, insertAccountSql } from "./rows.js";

const COLUMNS = "email, api_key_hash, created_at";

/** Customers are read on every management call (Basic auth): the hot reads are prepared once per connection. */
const byEmail = { name: "ferry_customer_by_email", text: `SELECT ${COLUMNS} FROM customers WHERE email = $1` };
// seq (identity) is the insertion order SQLite takes from rowid: two customers created in the same millisecond never
// swap which one is the operator.
const first = { name: "ferry_customer_first", text: `SELECT ${COLUMNS} FROM customers ORDER BY created_at, seq LIMIT 1` };
const accountsOf = {
  name: "ferry_accounts_of_customer",
  text: "SELECT * FROM accounts WHERE customer_id = $1 ORDER BY created_at, seq",
};

export function customerQueries(ctx: PgContext): CustomerQueries {
  const one = (rows: CustomerRow[]) => (rows[0] ? fromRow(rows[0]) : undefined);

  return {
    // ON CONFLICT DO NOTHING makes "insert unless the e-mail exists" one atomic statement: nodes bootstrapping the
    // same operator at once insert it once, and the others get false (a failed statement would abort the batch).
    customerInsert: ({ customer, account }) =>
      ctx.write(async (tx) => {
        const inserted = await tx.execute(
          `INSERT INTO customers (${COLUMNS}) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING`,
          [customer.email, customer.apiKeyHash, customer.createdAt],
        );
        if (inserted === 1 && account) await tx.query(insertAccountSql, accountValues(account));
        return inserted === 1;
      }),

    customerGet: async ({ email }) => one(await ctx.query<CustomerRow>(byEmail, [email])),

    customerFirst: async () => one(await ctx.query<CustomerRow>(first)),

    // The UPDATE of the customer row comes first: it locks that row, so two nodes changing the same customer apply
    // their changes one after the other, and the accounts and indexes follow in that same order (no deadlock).
    customerUpdate: ({ email, patch }) =>
      ctx.write(async (tx) => {
        const rename = patch.email !== undefined && patch.email !== email ? patch.email : undefined;
        const rows = await tx.query<CustomerRow>(
          `UPDATE customers SET email = COALESCE($2, email), api_key_hash = COALESCE($3, api_key_hash)
           WHERE email = $1 RETURNING ${COLUMNS}`,
          [email, rename ?? null, patch.apiKeyHash ?? null],
        );
        const customer = one(rows);
        if (!customer) throw new Error(`customer ${email} not found`);
        if (rename !== undefined) {
          await tx.execute("UPDATE accounts SET customer_id = $1 WHERE customer_id = $2", [rename, email]);
          await tx.execute("UPDATE search_indexes SET customer_id = $1 WHERE customer_id = $2", [rename, email]);
        }
        return customer;
      }),

    accountListByCustomer: async ({ customerId }) =>
      (await ctx.query<AccountRow>(accountsOf, [customerId])).map(accountFromRow),
  };
}
