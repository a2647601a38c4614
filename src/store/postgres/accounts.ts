import { coalescedReads } from "./coalesced-reads.js";
import type { Account, Store } from "../store.js";
import type { PgContext } from "./context.js";
import { Params } from "./filters.js";
import { type AccountRow, accountFromRow, accountValues, insertAccountSql } from "./rows.js";

type AccountQueries = Pick<
  Store,
  | "accountInsert"
  | "accountInsertDefault"
  | "accountUpdate"
  | "accountGet"
  | "accountGetByToken"
  | "accountFirst"
  | "accountRotateKeys"
>;

/** Any fixed number (next to migrate.ts's): the advisory lock under which a node creates the default account. */
const DEFAULT_ACCOUNT_LOCK = 7_262_006;

/** Patchable fields → columns. Values go in as parameters; only these names ever reach the SQL text. */
const COLUMNS: Record<string, string> = {
  token: "token",
  readOnlyToken: "read_only_token",
  password: "password",
  currentSigningKey: "current_signing_key",
  nextSigningKey: "next_signing_key",
  plan: "plan",
  state: "state",
  active: "active",
  customerId: "customer_id",
  modifyingState: "modifying_state",
  lastPlanUpgradeTime: "last_plan_upgrade_time",
  reservedPrice: "reserved_price",
  prodPackEnabled: "prod_pack_enabled",
  prometheusEnabled: "prometheus_enabled",
  budget: "budget",
};

export function accountQueries(ctx: PgContext): AccountQueries {
  const one = (rows: AccountRow[]): Account | undefined => (rows[0] ? accountFromRow(rows[0]) : undefined);
  // Read on every request (token auth) and every attempt (signing key): prepared once per connection. Reading the
  // database each time is what makes a rotated token or key take effect on every node at once.
  const byId = { name: "ferry_account_by_id", text: "SELECT * FROM accounts WHERE id = $1" };
  const byTokens = {
    name: "ferry_accounts_by_tokens",
    text: "SELECT * FROM accounts WHERE token = ANY($1::text[]) OR read_only_token = ANY($1::text[])",
  };
  // The tokens of one event-loop turn's requests are read together (coalesced-reads.ts).
  const readByToken = coalescedReads(
    (tokens) => ctx.query<AccountRow>(byTokens, [tokens]),
    (row) => [row.token, row.read_only_token],
  );
  const first = { name: "ferry_account_first", text: "SELECT * FROM accounts ORDER BY created_at, seq LIMIT 1" };

  return {
    accountInsert: ({ account }) =>
      ctx.write(async (tx) => {
        await tx.query(insertAccountSql, accountValues(account));
      }),

    // Nodes starting together on an empty database all see no account; without a lock each would insert its own
    // (with its own generated token). The transaction-scoped advisory lock makes them take turns: the next one
    // runs its check after the first committed, and finds that account.
    accountInsertDefault: ({ account }) =>
      ctx.write(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock($1)", [DEFAULT_ACCOUNT_LOCK]);
        if ((await tx.query("SELECT 1 FROM accounts LIMIT 1")).length > 0) return false;
        await tx.query(insertAccountSql, accountValues(account));
        return true;
      }),

    accountUpdate: ({ id, patch }) =>
      ctx.write(async (tx) => {
        const params = new Params();
        const sets = Object.entries(patch)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${COLUMNS[k]} = ${params.add(v)}`);
        const rows =
          sets.length === 0
            ? await tx.query<AccountRow>("SELECT * FROM accounts WHERE id = $1", [id])
            : await tx.query<AccountRow>(
                `UPDATE accounts SET ${sets.join(", ")} WHERE id = ${params.add(id)} RETURNING *`,
                params.values,
              );
        const account = one(rows);
        if (!account) throw new Error(`account ${id} not found`);
        return account;
      }),

    accountGet: async ({ id }) => one(await ctx.query<AccountRow>(byId, [id])),
    accountGetByToken: async ({ token }) => {
      const row = await readByToken(token);
      return row ? accountFromRow(row) : undefined;
    },
    // seq (identity) breaks ties in insertion order, as rowid does in SQLite: accounts created in the same
    // millisecond (a pinned test clock, the CLI right after the first start) must not make another one the default.
    accountFirst: async () => one(await ctx.query<AccountRow>(first)),

    accountRotateKeys: ({ id, next }) =>
      ctx.write(async (tx) => {
        const account = one(
          await tx.query<AccountRow>(
            "UPDATE accounts SET current_signing_key = next_signing_key, next_signing_key = $1 WHERE id = $2 RETURNING *",
            [next, id],
          ),
        );
        if (!account) throw new Error(`account ${id} not found`);
        return account;
      }),
  };
}
