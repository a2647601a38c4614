import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { logEntry } from "../../src/domain/log.js";
import type { Message, NewMessage } from "../../src/domain/message.js";
import type { Outcome } from "../../src/domain/records.js";
import type { Store } from "../../src/store/store.js";
import { adapters, type OpenedStore } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";

/**
 * The store side of a message's retry and replay (src/store/message-action-store.ts), on both adapters: the row in
 * any state, the replay's link written with it, bringing a RETRY forward, and the DLQ's count.
 */
const account = anAccount("acc-actions", { token: "t-actions" });

for (const adapter of adapters) {
  describe(`message actions: ${adapter.name}`, () => {
    let opened: OpenedStore;
    let store: Store;
    beforeEach(async () => {
      opened = await adapter.open();
      store = opened.store;
      await store.accountInsert({ account });
    });
    afterEach(() => opened.dispose());

    const insert = async (m: NewMessage, now = NOW) =>
      (await store.messageInsertMany({ items: [{ message: m }], now, dedupWindowMs: 0 }))[0]!;
    const lease = async (now: number) =>
      (await store.messageLeaseDue({ now, limit: 1, owner: "A", leaseUntil: now + 60_000 }))[0]!;
    const finish = (m: Message, now: number, outcome: Outcome) =>
      store.messageFinish({ message: m, owner: "A", now, outcome, logs: [logEntry(m, "ERROR", now)], newMessages: [] });

    it("reads a row in any state, an ended one too, with its body and spec", async () => {
      const m = aMessage(account.id, { body: Buffer.from("hi"), spec: { method: "PUT", headers: {}, retries: 2 } });
      await insert(m);
      const leased = await lease(NOW + 1);
      expect(await store.messageFinish({ message: leased, owner: "A", now: NOW + 2, outcome: { kind: "delivered" }, logs: [], newMessages: [] })).toBe(true);
      const stored = await store.messageStoredGet({ accountId: account.id, id: m.id });
      expect(stored?.state).toBe("DELIVERED");
      expect(stored?.message.body?.toString()).toBe("hi");
      expect(stored?.message.spec.method).toBe("PUT");
      expect(stored?.replayOf).toBeUndefined();
      // Live reads still do not see it (docs/states.md "Kept rows are invisible to live reads").
      expect(await store.messageGet({ accountId: account.id, id: m.id })).toBeUndefined();
      expect(await store.messageStoredGet({ accountId: "other", id: m.id })).toBeUndefined();
    });

    it("writes a replay with its link, and lists the replays of a message oldest first", async () => {
      const original = aMessage(account.id);
      await insert(original);
      const first = aMessage(account.id, { at: NOW + 5 });
      const second = aMessage(account.id, { at: NOW + 6 });
      const r1 = await store.messageReplayInsert({ item: { message: first }, replayOf: original.id, now: NOW + 5, dedupWindowMs: 0 });
      const r2 = await store.messageReplayInsert({ item: { message: second }, replayOf: original.id, now: NOW + 6, dedupWindowMs: 0 });
      expect([r1.messageId, r2.messageId]).toEqual([first.id, second.id]);
      expect((await store.messageStoredGet({ accountId: account.id, id: first.id }))?.replayOf).toBe(original.id);
      expect(await store.messageReplayList({ accountId: account.id, id: original.id, limit: 10 })).toEqual([
        { messageId: first.id, createdAt: NOW + 5 },
        { messageId: second.id, createdAt: NOW + 6 },
      ]);
      expect(await store.messageReplayList({ accountId: account.id, id: original.id, limit: 1 })).toHaveLength(1);
      expect(await store.messageReplayList({ accountId: account.id, id: first.id, limit: 10 })).toEqual([]);
    });

    it("brings a message waiting out its backoff forward, and nothing else", async () => {
      const m = aMessage(account.id, { spec: { method: "POST", headers: {}, retries: 3 } });
      await insert(m);
      expect(await store.messageRetryNow({ accountId: account.id, id: m.id, now: NOW })).toBe(false); // CREATED
      const leased = await lease(NOW + 1);
      expect(await store.messageRetryNow({ accountId: account.id, id: m.id, now: NOW + 1 })).toBe(false); // ACTIVE
      expect(await finish(leased, NOW + 2, { kind: "retry", dueAt: NOW + 3_600_000 })).toBe(true);
      expect(await lease(NOW + 3)).toBeUndefined();
      expect(await store.messageRetryNow({ accountId: "other", id: m.id, now: NOW + 3 })).toBe(false);
      expect(await store.messageRetryNow({ accountId: account.id, id: m.id, now: NOW + 3 })).toBe(true);
      expect((await lease(NOW + 3))?.id).toBe(m.id);
    });

    it("counts the DLQ entries that match a filter", async () => {
      for (const label of ["a", "a", "b"]) {
        const m = aMessage(account.id, { spec: { method: "POST", headers: {}, retries: 0, labels: [label] } });
        await insert(m);
        const leased = await lease(NOW + 1);
        const dlqId = `dlq-${m.id}`;
        expect(await finish(leased, NOW + 2, { kind: "failed", dlqId, response: { status: 500, headers: {}, body: Buffer.alloc(0) } })).toBe(true);
      }
      expect(await store.dlqCount({ accountId: account.id, filter: {} })).toBe(3);
      expect(await store.dlqCount({ accountId: account.id, filter: { label: ["a"] } })).toBe(2);
      expect(await store.dlqCount({ accountId: account.id, filter: { responseStatus: [404] } })).toBe(0);
      expect(await store.dlqCount({ accountId: "other", filter: {} })).toBe(0);
    });
  });
}
