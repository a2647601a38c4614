import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { coalescedReads } from "../../src/store/postgres/coalesced-reads.js";
import type { Account, Store } from "../../src/store/store.js";
import { adapters } from "./adapters.js";

const NOW = 1_800_000_000_000;
const account = (n: number): Account => ({
  id: `acc-token-${n}`,
  customerId: `c-${n}`,
  token: `token-${n}`,
  readOnlyToken: `read-only-${n}`,
  password: "p",
  currentSigningKey: "sig_current_key_0000",
  nextSigningKey: "sig_next_key_00000000",
  plan: "paid",
  state: "active",
  active: true,
  createdAt: NOW,
});

// On PostgreSQL the token reads of one event-loop turn go out as one statement (postgres/coalesced-reads.ts):
// every read must still get its own account, or none.
for (const adapter of adapters) {
  describe(`token reads: ${adapter.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose } = await adapter.open());
      for (const n of [1, 2, 3]) await store.accountInsert({ account: account(n) });
    });
    afterEach(async () => {
      await dispose();
    });

    it("reads asked for together each get their own account, by token or read-only token", async () => {
      const asked = ["token-1", "read-only-2", "unknown", "token-3", "token-1", "read-only-1", ""];
      const found = await Promise.all(asked.map((token) => store.accountGetByToken({ token })));
      expect(found.map((a) => a?.id)).toEqual([
        "acc-token-1",
        "acc-token-2",
        undefined,
        "acc-token-3",
        "acc-token-1",
        "acc-token-1",
        undefined,
      ]);
    });

    it("a read asked for after a rotation committed sees the new token only", async () => {
      const before = store.accountGetByToken({ token: "token-2" });
      expect((await before)?.id).toBe("acc-token-2");
      await store.accountUpdate({ id: "acc-token-2", patch: { token: "token-2-rotated" } });
      const [old, rotated] = await Promise.all([
        store.accountGetByToken({ token: "token-2" }),
        store.accountGetByToken({ token: "token-2-rotated" }),
      ]);
      expect(old).toBeUndefined();
      expect(rotated?.id).toBe("acc-token-2");
    });
  });
}

// One statement in flight at a time (coalesced-reads.ts): keys asked for while it is, in later turns, go out
// together as the next one. The reader here is the function's own input (what the adapter passes is a SELECT).
describe("coalesced reads: one statement in flight", () => {
  it("reads asked for in later turns while one is in flight go out together as the next statement", async () => {
    const calls: string[][] = [];
    let answer: () => void = () => {};
    const read = coalescedReads(
      async (keys: string[]) => {
        calls.push(keys);
        await new Promise<void>((resolve) => (answer = resolve));
        return keys.map((key) => ({ key }));
      },
      (row) => [row.key],
    );
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const first = read("a");
    await turn();
    expect(calls).toEqual([["a"]]);
    const later = [read("b")];
    await turn();
    later.push(read("c"), read("b"));
    await turn();
    expect(calls).toEqual([["a"]]); // still in flight: nothing else went out
    answer();
    expect((await first)?.key).toBe("a");
    await turn();
    expect(calls).toEqual([["a"], ["b", "c"]]);
    answer();
    expect((await Promise.all(later)).map((r) => r?.key)).toEqual(["b", "c", "b"]);
    // Idle again: the next read goes out at once, on its own.
    const next = read("d");
    await turn();
    expect(calls).toEqual([["a"], ["b", "c"], ["d"]]);
    answer();
    expect((await next)?.key).toBe("d");
  });

  it("a failed statement fails its reads only; the next ones go out", async () => {
    let fail = true;
    const read = coalescedReads(
      async (keys: string[]) => {
        if (fail) throw new Error("gone");
        return keys.map((key) => ({ key }));
      },
      (row) => [row.key],
    );
    await expect(read("a")).rejects.toThrow("gone");
    fail = false;
    expect((await read("b"))?.key).toBe("b");
  });
});
