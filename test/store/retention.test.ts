import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/domain/message.js";
import type { RetentionTable } from "../../src/store/retention-store.js";
import type { Store } from "../../src/store/store.js";
import { adapters, type OpenedStore } from "./adapters.js";
import { aMessage, NOW, seedUsage } from "./factories.js";

/** retentionDelete (docs/operations.md "Table bounds") against every adapter: by age, at most `limit` a call. */
const DAY_MS = 86_400_000;

const message = (id: string, createdAt: number): NewMessage =>
  aMessage("acc", { id, at: createdAt, dueAt: createdAt + DAY_MS, body: Buffer.from("b") });

for (const adapter of adapters) {
  describe(`retention store: ${adapter.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let opened: OpenedStore;
    beforeEach(async () => {
      opened = await adapter.open();
      ({ store, dispose } = opened);
      // Three publishes a minute apart, each with a deduplication key that lives one minute, then their counters.
      for (let i = 0; i < 3; i++) {
        const at = NOW + i * 60_000;
        await store.messageInsertMany({
          items: [{ message: message(`msg_${i}`, at), dedupKey: `key-${i}` }],
          now: at,
          dedupWindowMs: 60_000,
        });
        await seedUsage(opened, { accountId: "acc", now: at, metric: "delivered", count: 1, bytes: 1 });
      }
      for (let d = 0; d < 3; d++) {
        await store.quotaConsume({ accountId: `acc-${d}`, day: NOW - (NOW % DAY_MS) + d * DAY_MS, n: 1, limit: 10 });
      }
    });
    afterEach(() => dispose());

    const drain = async (table: RetentionTable, before: number, limit: number) => {
      const chunks: number[] = [];
      for (let i = 0; i < 10; i++) {
        const n = await store.retentionDelete({ table, before, limit });
        chunks.push(n);
        if (n < limit) break;
      }
      return chunks;
    };

    it("deletes logs older than `before`, at most `limit` rows a call", async () => {
      // The messages' CREATED entries are their rows' (docs/states.md "The message row"): no `logs` row to delete,
      // and the entries older than the cutoff are past retention all the same.
      expect(await drain("logs", NOW + 60_001, 1)).toEqual([0]);
      const left = await store.logList({ accountId: "acc", filter: {}, count: 10, order: "earliestFirst" });
      expect(left.logs.map((l) => l.messageId)).toEqual(["msg_2"]);
      expect(await drain("logs", NOW, 5)).toEqual([0]);
    });

    it("deletes expired deduplication keys only: a live key still deduplicates", async () => {
      expect(await drain("dedup", NOW + 120_001, 1)).toEqual([1, 1, 0]);
      const again = await store.messageInsertMany({
        items: [{ message: message("msg_dup", NOW + 120_000), dedupKey: "key-2" }],
        now: NOW + 120_000,
        dedupWindowMs: 60_000,
      });
      expect(again[0]).toMatchObject({ messageId: "msg_2", deduplicated: true });
    });

    it("deletes usage counters and quota days older than `before`", async () => {
      expect(await drain("usage", NOW + 120_000, 100)).toEqual([expect.any(Number)]);
      // The publish counters (requests) and delivered counters of the first two minutes are gone.
      expect(await drain("usage", NOW + 120_000, 100)).toEqual([0]);
      expect(await drain("usage", NOW + 180_000, 100)).toEqual([2]);
      expect(await drain("request_quota", NOW - (NOW % DAY_MS) + DAY_MS, 100)).toEqual([1]);
      expect(await store.quotaConsume({ accountId: "acc-1", day: NOW - (NOW % DAY_MS) + DAY_MS, n: 0, limit: 10 }))
        .toMatchObject({ used: 1 });
    });
  });
}
