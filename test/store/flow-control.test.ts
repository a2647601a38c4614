import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FlowControl, Message } from "../../src/domain/message.js";
import type { Store } from "../../src/store/store.js";
import { adapters, type OpenedStore } from "./adapters.js";
import { aKeyedMessage, anAccount, NOW } from "./factories.js";

/**
 * The claim's flow-control rules against both stores, with time passed in explicitly. Two lease owners stand for
 * two nodes sharing the database: the limits must hold across them. flow-control-postgres.test.ts has real
 * concurrent nodes (stores with their own pools) and the row-lock protocol.
 */
const LEASE = 60_000;
const T0 = NOW;

for (const adapter of adapters) {
  describe(`flow control: ${adapter.name}`, () => {
    let opened: OpenedStore;
    let store: Store;

    type Item = Parameters<Store["messageInsertMany"]>[0]["items"][number];
    async function insert(n: number, accountId: string, now: number, fc?: FlowControl, leaseOwner?: string) {
      const items = Array.from({ length: n }, () => {
        const item: Item = { message: aKeyedMessage(accountId, now, fc) };
        if (leaseOwner) {
          item.leaseOwner = leaseOwner;
          item.leaseUntil = now + LEASE;
        }
        return item;
      });
      return store.messageInsertMany({ items, now, dedupWindowMs: 0 });
    }

    const claim = (owner: string, now: number, limit = 100) =>
      store.messageLeaseDue({ now, limit, owner, leaseUntil: now + LEASE });

    const finish = (m: Message, now: number) =>
      store.messageFinish({
        message: m,
        owner: m.leaseOwner!,
        now,
        outcome: { kind: "delivered" },
        logs: [],
        newMessages: [],
      });

    /** ACTIVE rows of the account, read from the database itself (not through the store). */
    const activeRows = async (accountId: string) => {
      const text = "SELECT COUNT(*) AS n FROM messages WHERE account_id = $1 AND state = 'ACTIVE'";
      return Number((await opened.sql<{ n: number | string }>(text, [accountId]))[0]!.n);
    };

    beforeEach(async () => {
      opened = await adapter.open();
      store = opened.store;
      await store.accountInsert({ account: anAccount("acc-paid", { plan: "paid" }) });
      await store.accountInsert({ account: anAccount("acc-free", { plan: "free" }) });
    });
    afterEach(async () => {
      await opened.dispose();
    });

    describe("parallelism per key", () => {
      it("holds across two lease owners and releases the wait list oldest first as deliveries finish", async () => {
        const fc = { key: "k", parallelism: 2, periodSec: 1 };
        const inserted = await insert(5, "acc-paid", T0, fc);
        const a = await claim("node-a", T0);
        const b = await claim("node-b", T0);
        expect(a.map((m) => m.id)).toEqual(inserted.slice(0, 2).map((r) => r.messageId));
        expect(b).toEqual([]);
        expect(await store.flowKeyGet({ accountId: "acc-paid", key: "k" })).toMatchObject({
          parallelismCount: 2,
          waitListSize: 3,
        });

        await finish(a[0]!, T0 + 10);
        const next = await claim("node-b", T0 + 10);
        expect(next.map((m) => m.id)).toEqual([inserted[2]!.messageId]);
        expect(await claim("node-a", T0 + 10)).toEqual([]);
        expect(await store.flowKeyGet({ accountId: "acc-paid", key: "k" })).toMatchObject({
          parallelismCount: 2,
          waitListSize: 2,
        });
      });

      it("keeps the limit when a node dies: its rescued lease frees the slot and the wait list moves on", async () => {
        const fc = { key: "k", parallelism: 1, periodSec: 1 };
        const inserted = await insert(3, "acc-paid", T0, fc);
        expect(await claim("node-a", T0)).toHaveLength(1);
        // node-a dies: its lease expires and the rescuer makes the message due again (it leaves ACTIVE).
        let now = T0 + LEASE + 1;
        await store.messageReleaseLeases({ now, expiredOnly: true, exceptOwner: "node-b" });
        const delivered = new Set<string>();
        for (let round = 0; round < 10 && delivered.size < 3; round++) {
          const batch = await claim("node-b", now);
          expect(batch.length).toBeLessThanOrEqual(1);
          expect(await activeRows("acc-paid")).toBeLessThanOrEqual(1);
          for (const m of batch) {
            delivered.add(m.id);
            await finish(m, now);
          }
          now += 1;
        }
        expect([...delivered].sort()).toEqual(inserted.map((r) => r.messageId).sort());
        // Nothing waits any more: the key has nothing to wake.
        expect(await store.flowKeyGet({ accountId: "acc-paid", key: "k" })).toMatchObject({ waitListSize: 0 });
        expect(await store.messageNextDueAt({ now })).toBeUndefined();
      });
    });

    describe("rate per period", () => {
      it("starts `rate` per window, arms the next window and holds the rest until then", async () => {
        const fc = { key: "r", rate: 2, periodSec: 10 };
        await insert(5, "acc-paid", T0, fc);
        expect(await claim("node-a", T0)).toHaveLength(2);
        expect(await claim("node-b", T0 + 5000)).toHaveLength(0);
        expect(await store.messageNextDueAt({ now: T0 + 5000 })).toBe(T0 + 10_000);
        expect(await claim("node-b", T0 + 9999)).toHaveLength(0);
        expect(await claim("node-b", T0 + 10_000)).toHaveLength(2);
        expect(await claim("node-a", T0 + 20_000)).toHaveLength(1);
        expect(await store.flowKeyGet({ accountId: "acc-paid", key: "r" })).toMatchObject({
          rateCount: 1,
          periodStart: T0 + 20_000,
          waitListSize: 0,
        });
      });

      it("a claim given a clock opens its window at the clock's reading when it runs, not at its `now`", async () => {
        const fc = { key: "late", rate: 2, periodSec: 1 };
        await insert(3, "acc-paid", T0, fc);
        // The claim was asked for at T0 but ran 700 ms later (it waited for another node's locks): the caller's
        // clock, real time shifted to read T0 + 700 now, is read again when the claim runs.
        const started = await store.messageLeaseDue({
          now: T0,
          limit: 10,
          owner: "node-a",
          leaseUntil: T0 + 60_000,
          liveClockOffsetMs: T0 + 700 - Date.now(),
        });
        expect(started).toHaveLength(2);
        const key = await store.flowKeyGet({ accountId: "acc-paid", key: "late" });
        expect(key?.rateCount).toBe(2);
        const opened = key!.periodStart;
        expect(opened).toBeGreaterThanOrEqual(T0 + 700);
        // So the next window opens one period after the deliveries went, not after the claim was asked for.
        expect(await claim("node-b", opened + 800)).toHaveLength(0);
        expect(await claim("node-b", opened + 1000)).toHaveLength(1);
      });

      it("resetRate opens a new window now; pause holds and resume releases", async () => {
        const fc = { key: "r", rate: 1, periodSec: 3600 };
        await insert(3, "acc-paid", T0, fc);
        expect(await claim("node-a", T0)).toHaveLength(1);
        expect(await claim("node-a", T0 + 1)).toHaveLength(0);
        expect(await store.flowKeyResetRate({ accountId: "acc-paid", key: "r", now: T0 + 2 })).toBe(true);
        expect(await claim("node-a", T0 + 2)).toHaveLength(1);

        await store.flowKeySetPaused({ accountId: "acc-paid", key: "r", paused: true, now: T0 + 3 });
        await store.flowKeyResetRate({ accountId: "acc-paid", key: "r", now: T0 + 3 });
        expect(await claim("node-a", T0 + 3)).toHaveLength(0);
        await store.flowKeySetPaused({ accountId: "acc-paid", key: "r", paused: false, now: T0 + 4 });
        expect(await claim("node-a", T0 + 4)).toHaveLength(1);
        expect(await store.flowKeyResetRate({ accountId: "acc-paid", key: "nope", now: T0 })).toBe(false);
      });
    });

    describe("configuration", () => {
      it("follows the latest message unless pinned", async () => {
        await insert(1, "acc-paid", T0, { key: "c", parallelism: 2, periodSec: 1 });
        await insert(1, "acc-paid", T0, { key: "c", rate: 5, periodSec: 60 });
        expect(await store.flowKeyGet({ accountId: "acc-paid", key: "c" })).toMatchObject({ rate: 5, periodSec: 60 });
        expect((await store.flowKeyGet({ accountId: "acc-paid", key: "c" }))?.parallelism).toBeUndefined();

        await store.flowKeyPin({ accountId: "acc-paid", key: "c", now: T0, parallelism: 1 });
        await insert(1, "acc-paid", T0, { key: "c", parallelism: 9, rate: 7, periodSec: 1 });
        expect(await store.flowKeyGet({ accountId: "acc-paid", key: "c" })).toMatchObject({
          parallelism: 1,
          rate: 7,
          periodSec: 1,
          pinnedParallelism: true,
          pinnedRate: false,
        });
        await store.flowKeyUnpin({ accountId: "acc-paid", key: "c", now: T0, parallelism: true, rate: false });
        await insert(1, "acc-paid", T0, { key: "c", parallelism: 9, periodSec: 1 });
        expect(await store.flowKeyGet({ accountId: "acc-paid", key: "c" })).toMatchObject({ parallelism: 9 });
      });
    });

    describe("global parallelism", () => {
      it("bounds ACTIVE rows per account in the claim and on the fast path, and counts exactly", async () => {
        // The free plan allows 10 in flight. Six go the fast path (inserted ACTIVE), the rest through the claim.
        const fast = await insert(6, "acc-free", T0, undefined, "node-a");
        expect(fast.every((r) => r.message?.state === "ACTIVE")).toBe(true);
        await insert(10, "acc-free", T0);
        const claimed = await claim("node-b", T0);
        expect(claimed).toHaveLength(4);
        expect(await store.flowGlobalActive({ accountId: "acc-free" })).toBe(10);
        // At the bound the fast path gives way: the message is stored for the claim instead.
        const refused = await insert(1, "acc-free", T0, undefined, "node-a");
        expect(refused[0]!.message?.state).toBe("CREATED");
        expect(refused[0]!.message?.leaseOwner).toBeUndefined();
        // Another account is not affected.
        await insert(3, "acc-paid", T0);
        expect(await claim("node-b", T0)).toHaveLength(3);

        await finish(claimed[0]!, T0 + 1);
        await finish(claimed[1]!, T0 + 1);
        expect(await claim("node-a", T0 + 1)).toHaveLength(2);
        expect(await store.flowGlobalActive({ accountId: "acc-free" })).toBe(10);
        expect(await activeRows("acc-free")).toBe(10);

        // Rescued leases leave ACTIVE: the counter follows every path, not only the claim and finish.
        await store.messageReleaseLeases({ now: T0 + LEASE + 2, expiredOnly: true, exceptOwner: "x" });
        expect(await store.flowGlobalActive({ accountId: "acc-free" })).toBe(0);
        expect(await activeRows("acc-free")).toBe(0);
        const reclaimed = await claim("node-a", T0 + LEASE + 2);
        expect(reclaimed.filter((m) => m.accountId === "acc-free")).toHaveLength(10);
        expect(await store.flowGlobalActive({ accountId: "acc-free" })).toBe(await activeRows("acc-free"));
      });
    });

  });
}
