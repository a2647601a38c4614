import { AppError } from "../../errors.js";
import type { TokenCheck } from "../store.js";
import type { Tx } from "./write-batch-tx.js";

/*
 * Tokens checked at commit (docs/postgres.md): a publish authenticated from a node's account cache commits only while
 * its token is still the account's token and the account is active. A rotation made through another node answers
 * once every node was sent its NOTIFY, but a node may take that NOTIFY in some milliseconds later; the check makes the
 * publish's own transaction the judge instead, so the old token is refused from the rotation's COMMIT on.
 */

/** The checks that hold (the account's token, active): one row each, by position. */
const holdingSql = `SELECT p.ord FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(id, token, ord)
  JOIN accounts a ON a.id = p.id AND a.token = p.token AND a.active AND a.state = 'active'`;
const holdingStatement = { name: "ferry_tokens_holding", text: holdingSql };
/** The same as a premise of a pipelined run (migration 069): fails the transaction unless every check holds. */
const expectStatement = {
  name: "ferry_tokens_expect",
  text: `SELECT ferry_expect((SELECT count(*) FROM (${holdingSql}) h) = cardinality($1::text[]), 'a publish''s token') AS ok`,
};

/**
 * Checks the tokens of a run's insert calls. In a pipelined run the check is one deferred statement for them all
 * (write-batch-tx.ts, Tx.defer): when one does not hold, nothing commits and the batch runs again not pipelined.
 * There the statement is awaited, and a token that no longer holds fails its call with 401 (in the savepoint run
 * that follows, alone).
 */
export async function checkTokens(tx: Tx, checks: readonly (TokenCheck | undefined)[]): Promise<void> {
  const wanted = checks.filter((c): c is TokenCheck => c !== undefined);
  if (wanted.length === 0) return;
  const values = [wanted.map((c) => c.accountId), wanted.map((c) => c.token)];
  if (tx.pipelined) {
    await tx.defer(expectStatement, values);
    return;
  }
  const holding = await tx.query<{ ord: number }>(holdingStatement, values);
  if (holding.length < wanted.length) throw new AppError("unauthorized", "invalid token");
}
