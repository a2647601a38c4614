import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/domain/message.js";
import type { Store } from "../../src/store/store.js";
import { adapters } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";

const account = anAccount("acc-gc", { token: "t-gc" });

const message = (): NewMessage => aMessage(account.id, { body: Buffer.from("b") });

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

    it("a lone failing write rejects and leaves nothing behind", async () => {
      await expect(store.accountInsert({ account })).rejects.toThrow();
      expect((await store.accountGet({ id: account.id }))!.token).toBe(account.token);
    });
  });
}
