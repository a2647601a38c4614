import { writesAccounts } from "../account-writes.js";
import type { Account, Store } from "../store.js";

/** Beyond this many cached accounts the cache starts again empty (a bound, not an eviction policy). */
const MAX_ENTRIES = 10_000;

/**
 * Accounts by id (and, on a single-node store, by token) on the main thread (docs/threading.md, "Account cache"):
 * every publish authenticates and every delivery signs with its account's key, and neither should cost a store
 * round trip. The cache forgets everything when an account may have changed:
 * - before and after every account write made through this store (`writesAccounts`);
 * - when the store reports a change made elsewhere (`subscribeAccountChanges`: NOTIFY on PostgreSQL, which an
 *   account write on any node waits for before it answers, see postgres/index.ts).
 * A read that was under way while the cache was cleared does not fill it (its answer may predate the write).
 * Only accounts that exist are kept: an unknown token is looked up every time, so a new account works at once.
 *
 * Tokens are cached on every store, but with several nodes only callers that have the token checked again where they
 * write (`checkedAtCommit`: the publish route, whose insert carries a `tokenCheck`) are answered from the cache.
 * The NOTIFY of a rotation reaches another node some milliseconds after the rotating node answered, and any other
 * request in between would still be let in with the old token; a publish is refused at its COMMIT instead
 * (docs/postgres.md, "Tokens checked at commit"). A signing key read that late signs with a key the receiver still
 * knows.
 */
export function withAccountCache(store: Store): Store {
  const singleNode = store.capabilities.singleNode;
  const byId = new Map<string, Account>();
  const byToken = new Map<string, Account>();
  let generation = 0;
  const forget = () => {
    generation++;
    byId.clear();
    byToken.clear();
  };
  const keep = (account: Account | undefined, readAt: number) => {
    if (!account || readAt !== generation) return;
    if (byId.size >= MAX_ENTRIES) forget();
    byId.set(account.id, account);
    byToken.set(account.token, account);
  };
  store.subscribeAccountChanges?.(forget);

  const accountGet: Store["accountGet"] = async (p) => {
    const hit = byId.get(p.id);
    if (hit) return hit;
    const readAt = generation;
    const account = await store.accountGet(p);
    keep(account, readAt);
    return account;
  };
  const accountGetByToken: Store["accountGetByToken"] = async (p) => {
    const hit = singleNode || p.checkedAtCommit === true ? byToken.get(p.token) : undefined;
    if (hit) return hit;
    const readAt = generation;
    const account = await store.accountGetByToken(p);
    // Keyed by the token asked for: an account may answer to more than one (a read-only token, for instance).
    if (account && readAt === generation) byToken.set(p.token, account);
    keep(account, readAt);
    return account;
  };
  const wrapped = new Map<string, unknown>();

  return new Proxy(store, {
    get(target, name, receiver) {
      if (name === "accountGet") return accountGet;
      if (name === "accountGetByToken") return accountGetByToken;
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof name !== "string" || typeof value !== "function" || !writesAccounts(name)) return value;
      let write = wrapped.get(name);
      if (!write) {
        const method = value as (params: unknown) => Promise<unknown>;
        write = async (params: unknown) => {
          forget();
          try {
            return await method.call(target, params);
          } finally {
            forget();
          }
        };
        wrapped.set(name, write);
      }
      return write;
    },
  });
}
