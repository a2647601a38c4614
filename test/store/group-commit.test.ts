import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newMessageId } from "../../src/domain/ids.js";
import { logEntry } from "../../src/domain/log.js";
import type { NewMessage } from "../../src/domain/message.js";
import type { Store } from "../../src/store/store.js";
import { adapters } from "./adapters.js";

const NOW = 1_800_000_000_000;
const account = {
  id: "acc-gc",
  customerId: "c",
  token: "t-gc",
  password: "p",
  currentSigningKey: "sig_current_key_0000",
  nextSigningKey: "sig_next_key_00000000",
  plan: "paid" as const,
  state: "active",
  active: true,
  createdAt: NOW,
};

const message = (): NewMessage => ({
  id: newMessageId(NOW),
  accountId: account.id,
  kind: "message",
  state: "CREATED",
  url: "http://127.0.0.1:9/x",
  body: Buffer.from("b"),
  spec: { method: "POST", headers: {}, retries: 0 },
  createdAt: NOW,
  notBefore: 0,
  dueAt: NOW,
  retried: 0,
});

for (const adapter of adapters) {
  describe(`group commit: ${adapter.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose } = await adapter.open());
      await store.accountInsert({ account });
    });
    afterEach(async () => {
      await dispose();
    });

    it("writes issued in one tick commit together, and a failing one is rejected alone", async () => {
      const messages = Array.from({ length: 50 }, message);
      // All issued in the same tick: one batch. The duplicate account fails; every other write must still commit.
      const writes = [
        ...messages
          .slice(0, 25)
          .map((m) => store.messageInsertMany({ items: [{ message: m }], now: NOW, dedupWindowMs: 0 })),
        store.accountInsert({ account }),
        ...messages
          .slice(25)
          .map((m) => store.messageInsertMany({ items: [{ message: m }], now: NOW, dedupWindowMs: 0 })),
      ];
      const settled = await Promise.allSettled(writes);
      expect(settled.filter((s) => s.status === "rejected")).toHaveLength(1);
      expect(settled[25]!.status).toBe("rejected");
      for (const m of messages) expect(await store.messageGet({ accountId: account.id, id: m.id }), m.id).toBeDefined();
      // Each message has its CREATED log entry: a rolled-back write left no half of itself behind.
      const logs = await store.logList({ accountId: account.id, filter: {}, count: 100, order: "earliestFirst" });
      expect(logs.logs.map((l) => l.messageId).sort()).toEqual(messages.map((m) => m.id).sort());
    });

    // On PostgreSQL the publishes of one batch share one INSERT and the plain deliveries one DELETE
    // (write-batcher.ts, MergeableOp); a bad item must still fail alone, and a lost lease answer false alone.
    it("publishes of one tick with a bad one among them: the bad one fails alone", async () => {
      const taken = message();
      await store.messageInsertMany({ items: [{ message: taken }], now: NOW, dedupWindowMs: 0 });
      const fresh = Array.from({ length: 20 }, message);
      const publish = (m: NewMessage) => store.messageInsertMany({ items: [{ message: m }], now: NOW, dedupWindowMs: 0 });
      const settled = await Promise.allSettled([...fresh.slice(0, 10).map(publish), publish(taken), ...fresh.slice(10).map(publish)]);
      expect(settled.map((s) => s.status)).toEqual([...Array(10).fill("fulfilled"), "rejected", ...Array(10).fill("fulfilled")]);
      for (const m of fresh) expect(await store.messageGet({ accountId: account.id, id: m.id }), m.id).toBeDefined();
      const logs = await store.logList({ accountId: account.id, filter: {}, count: 100, order: "earliestFirst" });
      expect(logs.logs.filter((l) => l.state === "CREATED")).toHaveLength(21);
    });

    it("deliveries finished in one tick: each applies alone, and a lost lease answers false alone", async () => {
      const owner = "node-a";
      const inserted = await store.messageInsertMany({
        items: Array.from({ length: 12 }, () => ({ message: message(), leaseOwner: owner, leaseUntil: NOW + 60_000 })),
        now: NOW,
        dedupWindowMs: 0,
      });
      const leased = inserted.map((r) => r.message!);
      expect(leased.every((m) => m.state === "ACTIVE")).toBe(true);
      const finish = (m: (typeof leased)[number], by: string) =>
        store.messageFinish({
          message: m,
          owner: by,
          now: NOW + 1,
          outcome: { kind: "delivered" },
          logs: [logEntry(m, "DELIVERED", NOW + 1)],
          newMessages: [],
        });
      const answers = await Promise.all(leased.map((m, i) => finish(m, i === 5 ? "node-b" : owner)));
      expect(answers).toEqual(leased.map((_, i) => i !== 5));
      for (const [i, m] of leased.entries()) {
        expect(await store.messageGet({ accountId: account.id, id: m.id }), m.id).toEqual(i === 5 ? expect.anything() : undefined);
      }
      const logs = await store.logList({ accountId: account.id, filter: {}, count: 100, order: "earliestFirst" });
      expect(logs.logs.filter((l) => l.state === "DELIVERED").map((l) => l.messageId).sort()).toEqual(
        leased.filter((_, i) => i !== 5).map((m) => m.id).sort(),
      );
    });

    it("publishes spread over many ticks all take the fast path while the account has room", async () => {
      // Publishes keep coming while earlier ones commit. On PostgreSQL each run's fast-path check takes the
      // account's flow-control row without waiting: two runs of one node in flight together would send the
      // later one's messages through the claim instead (write-batcher.ts, oneAtATime).
      const results: Promise<{ message?: { state: string } }[]>[] = [];
      for (let tick = 0; tick < 40; tick++) {
        for (let i = 0; i < 5; i++) {
          results.push(
            store.messageInsertMany({
              items: [{ message: message(), leaseOwner: "node-a", leaseUntil: NOW + 60_000 }],
              now: NOW,
              dedupWindowMs: 0,
            }),
          );
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      const states = (await Promise.all(results)).map((r) => r[0]!.message!.state);
      expect(states.filter((s) => s !== "ACTIVE")).toEqual([]);
    });

    it("a lone failing write rejects and leaves nothing behind", async () => {
      await expect(store.accountInsert({ account })).rejects.toThrow();
      expect((await store.accountGet({ id: account.id }))!.token).toBe(account.token);
    });
  });
}
