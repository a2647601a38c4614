/**
 * Which store methods may change an account (its token, signing keys, plan, owner …): every `account…` and
 * `customer…` method that is not a read. The account cache (thread/account-cache.ts) forgets what it holds after
 * one, and on PostgreSQL such a call returns only once the other nodes have been told (postgres/index.ts). A rule
 * on names rather than a list, so a method added later is covered without touching this file; a read that the rule
 * takes for a write only costs a cache refill.
 */
export function writesAccounts(method: string): boolean {
  return /^(account|customer)/.test(method) && !/(Get|First|List|Count|Activity)/.test(method);
}
