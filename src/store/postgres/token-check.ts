import { AppError } from "../../errors.js";
import type { TokenCheck } from "../store.js";
import type { Tx } from "./write-batch-tx.js";

/*
 * Tokens checked at commit (docs/postgres.md): a publish authenticated from a node's account cache commits only while
 * its token is still the account's token and the account is active. A rotation made through another node answers
 * once every node was sent its NOTIFY, but a node may take that NOTIFY in some milliseconds later; the check makes the
 * publish's own transaction the judge instead, so the old token is refused from the rotation's COMMIT on.
 */

/** The checks that hold (the account's token, active): one row each. `$1`, `$2`: account ids, tokens. */
export const tokensHoldingSql = (ids: string, tokens: string) => `SELECT p.id FROM unnest(${ids}::text[], ${tokens}::text[]) AS p(id, token)
  JOIN accounts a ON a.id = p.id AND a.token = p.token AND a.active AND a.state = 'active'`;
const holdingStatement = { name: "ferry_tokens_holding", text: tokensHoldingSql("$1", "$2") };
/** The premise the batch's flush statement checks (context.ts): every token of the run holds. */
export const tokensExpectSql = (ids: string, tokens: string) =>
  `ferry_expect((SELECT count(*) FROM (${tokensHoldingSql(ids, tokens)}) h) = coalesce(cardinality(${ids}::text[]), 0), 'a publish''s token')`;

/**
 * Checks the tokens of a run's insert calls. In a pipelined run the batch's flush statement checks them all (one
 * statement the batch sends anyway, Tx.checkTokenAtFlush): when one does not hold, nothing commits and the batch runs
 * again not pipelined. There the check is read first, and a token that no longer holds fails its call with 401 (in
 * the savepoint run that follows, alone).
 */
export async function checkTokens(tx: Tx, checks: readonly (TokenCheck | undefined)[]): Promise<void> {
  const wanted = checks.filter((c): c is TokenCheck => c !== undefined);
  if (wanted.length === 0) return;
  if (tx.pipelined) {
    for (const check of wanted) tx.checkTokenAtFlush(check);
    return;
  }
  const values = [wanted.map((c) => c.accountId), wanted.map((c) => c.token)];
  const holding = await tx.query<{ id: string }>(holdingStatement, values);
  if (holding.length < wanted.length) throw new AppError("unauthorized", "invalid token");
}
