import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AppError } from "../../src/errors.js";
import { withAccountCache } from "../../src/store/thread/account-cache.js";
import type { Store } from "../../src/store/store.js";
import { type OpenedStore, openPostgresTestStores } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";
import { postgresAvailable } from "../helpers/postgres.js";

// Tokens checked at commit (docs/postgres.md): on a store shared by several nodes, a publish authenticated from the
// account cache commits only while its token still holds. The token is changed behind the stores' back (raw SQL):
// what a node whose cache has not heard of a rotation yet would see.
describe.skipIf(!postgresAvailable())("tokens checked at commit (PostgreSQL)", () => {
  let opened: OpenedStore;
  let store: Store;
  beforeEach(async () => {
    opened = await openPostgresTestStores();
    store = opened.store;
    for (const id of ["acc-a", "acc-b"]) await store.accountInsert({ account: anAccount(id) });
  });
  afterEach(async () => {
    await opened.dispose();
  });

  const insert = (accountId: string, token: string) =>
    store.messageInsertMany({
      items: [{ message: aMessage(accountId) }],
      now: NOW,
      dedupWindowMs: 0,
      tokenCheck: { accountId, token },
    });
  const rowsOf = async (accountId: string) =>
    Number(
      (await opened.sql<{ n: string }>("SELECT count(*) AS n FROM messages WHERE account_id = $1", [accountId]))[0]!.n,
    );

  it("an insert whose token still holds commits", async () => {
    const [result] = await insert("acc-a", "token-acc-a");
    expect(result!.deduplicated).toBe(false);
    expect(await rowsOf("acc-a")).toBe(1);
  });

  it("an insert whose token changed (401), or whose account was deactivated (403), fails and writes nothing", async () => {
    await opened.sql("UPDATE accounts SET token = 'token-acc-a-rotated' WHERE id = 'acc-a'");
    await opened.sql("UPDATE accounts SET active = false WHERE id = 'acc-b'");
    for (const [accountId, token, status] of [
      ["acc-a", "token-acc-a", 401],
      ["acc-b", "token-acc-b", 403],
    ] as const) {
      const error = await insert(accountId, token).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(status);
      expect(await rowsOf(accountId)).toBe(0);
    }
  });

  it("in one group commit, only the publish whose token no longer holds fails", async () => {
    await opened.sql("UPDATE accounts SET token = 'token-acc-b-rotated' WHERE id = 'acc-b'");
    // Asked for in the same turn: one run of the batcher holds both (write-batcher.ts, MergeableOp).
    const [a, b] = await Promise.allSettled([insert("acc-a", "token-acc-a"), insert("acc-b", "token-acc-b")]);
    expect(a.status).toBe("fulfilled");
    expect(b.status).toBe("rejected");
    expect(((b as PromiseRejectedResult).reason as AppError).status).toBe(401);
    expect(await rowsOf("acc-a")).toBe(1);
    expect(await rowsOf("acc-b")).toBe(0);
  });

  it("publishes of one account in one run share its check, and a stale token among them still fails alone", async () => {
    // One check per account and token goes with the run (write-batcher.ts, flush): three publishes with the account's
    // token and one with a token that never was its own, asked for in the same turn.
    const settled = await Promise.allSettled([
      insert("acc-a", "token-acc-a"),
      insert("acc-a", "token-acc-a"),
      insert("acc-a", "token-acc-a-stale"),
      insert("acc-a", "token-acc-a"),
    ]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(((settled[2] as PromiseRejectedResult).reason as AppError).status).toBe(401);
    expect(await rowsOf("acc-a")).toBe(3);
  });

  it("the account cache answers a token from memory only to a caller that has it checked at commit", async () => {
    // Another node, which never wrote an account: its LISTEN connection opens with the cache's subscription and
    // then clears the cache once (postgres/notify.ts). Wait for that, so nothing else clears it below.
    const node = await opened.more();
    const cached = withAccountCache(node);
    let heard = 0;
    node.subscribeAccountChanges!(() => heard++);
    await vi.waitFor(() => expect(heard).toBe(1));
    expect((await cached.accountGetByToken({ token: "token-acc-a" }))?.id).toBe("acc-a");
    // With the accounts trigger off for this statement's session: no NOTIFY clears the cache.
    await opened.sql(
      "SET session_replication_role = replica; " +
        "UPDATE accounts SET token = 'token-acc-a-rotated' WHERE id = 'acc-a'; RESET session_replication_role",
    );
    // Another request reads again and sees the change at once; a publish may use the cached account.
    expect(await cached.accountGetByToken({ token: "token-acc-a" })).toBeUndefined();
    expect((await cached.accountGetByToken({ token: "token-acc-a", checkedAtCommit: true }))?.id).toBe("acc-a");
  });
});
