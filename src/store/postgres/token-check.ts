import { accountNotActive, AppError } from "../../errors.js";
import type { TokenCheck } from "../store.js";
import type { Tx } from "./write-batch-tx.js";
import { arrayRows } from "./rows.js";

/*
 * Tokens checked at commit (docs/postgres.md): a publish authenticated from a node's account cache commits only while
 * its token is still the account's token and the account is active. A rotation made through another node answers
 * once every node was sent its NOTIFY, but a node may take that NOTIFY in some milliseconds later; the check makes the
 * publish's own transaction the judge instead, so the old token is refused from the rotation's COMMIT on.
 */

/** The checks that hold (the account's token, active): one row each. `$1`, `$2`: account ids, tokens. */
const tokensHoldingSql = (ids: string, tokens: string) =>
  `SELECT p.id FROM ${arrayRows("p", [["id", "text"], ["token", "text"]], [ids, tokens])}
    JOIN accounts a ON a.id = p.id AND a.token = p.token AND a.active AND a.state = 'active'`;
/** Where the checks stand now: the accounts' token and state, for the answer of one that no longer holds. */
const accountsStatement = {
  name: "ferry_tokens_accounts",
  text: "SELECT id, token, active, state FROM accounts WHERE id = ANY($1::text[])",
};
/** The premise the batch's flush statement checks (context.ts): every token of the run holds. */
export const tokensExpectSql = (ids: string, tokens: string) =>
  `ferry_expect((SELECT count(*) FROM (${tokensHoldingSql(ids, tokens)}) h) = coalesce(cardinality(${ids}::text[]), 0),
    'a publish''s token')`;

/**
 * Checks the tokens of a run's insert calls. In a pipelined run the batch's flush statement checks them all (one
 * statement the batch sends anyway, Tx.checkTokenAtFlush): when one does not hold, nothing commits and the batch runs
 * again not pipelined. There the accounts are read first, and a call whose token no longer holds fails as the same
 * request would now fail its authentication (401 for a token that changed, 403 for an account no longer active), in
 * the savepoint run that follows alone.
 */
export async function checkTokens(tx: Tx, checks: readonly (TokenCheck | undefined)[]): Promise<void> {
  const wanted = checks.filter((c): c is TokenCheck => c !== undefined);
  if (wanted.length === 0) return;
  if (tx.pipelined) {
    for (const check of wanted) tx.checkTokenAtFlush(check);
    return;
  }
  const rows = await tx.query<{ id: string; token: string; active: boolean; state: string }>(accountsStatement, [
    wanted.map((c) => c.accountId),
  ]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const check of wanted) {
    const account = byId.get(check.accountId);
    if (account?.token !== check.token) throw new AppError("unauthorized", "invalid token");
    if (!account.active || account.state !== "active") throw accountNotActive(account.state);
  }
}
