import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { plans } from "../../src/domain/plans.js";
import type { Store } from "../../src/store/store.js";
import { adapters, type OpenedStore } from "./adapters.js";
import { aKeyedMessage, aMessage, anAccount, NOW, publish } from "./factories.js";

/**
 * Store methods the server reads without a test of their own elsewhere in test/store: readiness and the scrape-time
 * gauges (docs/metrics.md), and the list of an account's flow-control keys (docs/flow-control.md).
 */
for (const adapter of adapters) {
  describe(`operations and flow key listing: ${adapter.name}`, () => {
    let opened: OpenedStore;
    let store: Store;
    beforeEach(async () => {
      opened = await adapter.open();
      store = opened.store;
      await store.accountInsert({ account: anAccount("acc") });
      await store.accountInsert({ account: anAccount("free", { plan: "free" }) });
    });
    afterEach(async () => {
      await opened.dispose();
    });

    it("readiness lists the migrations of this build the database has not applied", async () => {
      expect(await store.opsReadiness()).toEqual({ pendingMigrations: [] });
      const [first] = await opened.sql<{ name: string }>(
        "SELECT name FROM schema_migrations ORDER BY version LIMIT 1",
      );
      await opened.sql("DELETE FROM schema_migrations WHERE name = $1", [first!.name]);
      expect(await store.opsReadiness()).toEqual({ pendingMigrations: [first!.name] });
    });

    it("gauges count messages by state, the DLQ, queue lag and flow-control wait lists", async () => {
      const lease = (owner: string, limit: number) =>
        store.messageLeaseDue({ now: NOW, limit, owner, leaseUntil: NOW + 60_000 });
      // Two due, one delayed; one of the due ones is then leased (ACTIVE).
      await publish(store, [aMessage("acc"), aMessage("acc", { dueAt: NOW + 60_000 })]);
      expect(await lease("a", 1)).toHaveLength(1);
      await publish(store, [aMessage("acc", { dueAt: NOW - 5 })]);
      // A key with parallelism 1: one starts, two wait for the key.
      const fc = { key: "k", parallelism: 1, periodSec: 1 };
      await publish(store, [1, 2, 3].map(() => aKeyedMessage("acc", NOW, fc)));
      // A FIFO queue with one slot: one claimable, two QUEUED.
      await publish(store, [1, 2, 3].map(() => aMessage("acc", { queueName: "q" })));
      const started = await lease("a", 100);
      expect(started).toHaveLength(3); // the due message, the key's first, the queue's head
      const gauges = await store.opsGauges({ now: NOW });
      expect(gauges).toEqual({
        messages: {
          pending: 0,
          delayed: 1,
          active: 4,
          retrying: 0,
          waitingFlowControl: 2,
          waitingGlobal: 0,
          queued: 2,
        },
        dlqSize: 0,
        queueLag: 3,
        flowControlWaitLists: 1,
        oldestDueAt: undefined,
      });
      // One retry in backoff, one failure into the DLQ.
      const [retry, fail] = started;
      const finish = (m: (typeof started)[number], outcome: Parameters<Store["messageFinish"]>[0]["outcome"]) =>
        store.messageFinish({ message: m, owner: "a", now: NOW, outcome, logs: [], newMessages: [] });
      await finish(retry!, { kind: "retry", dueAt: NOW + 30_000 });
      const response = { status: 500, headers: {}, body: Buffer.alloc(0) };
      await finish(fail!, { kind: "failed", dlqId: "dlq-1", response });
      const after = await store.opsGauges({ now: NOW });
      expect(after.messages).toMatchObject({ active: 2, retrying: 1, delayed: 1 });
      expect(after.dlqSize).toBe(1);
      // Later, the delayed message and the retry are due: the oldest due time is reported.
      expect((await store.opsGauges({ now: NOW + 60_000 })).oldestDueAt).toBe(NOW + 30_000);
    });

    it("gauges count messages waiting for the account's global bound apart", async () => {
      const cap = plans.free.max_global_parallelism;
      await publish(store, Array.from({ length: cap + 2 }, () => aMessage("free")));
      const started = await store.messageLeaseDue({ now: NOW, limit: cap + 2, owner: "a", leaseUntil: NOW + 60_000 });
      expect(started).toHaveLength(cap);
      expect((await store.opsGauges({ now: NOW })).messages).toMatchObject({ active: cap, waitingGlobal: 2 });
    });

    it("lists an account's flow-control keys by name, with their deliveries in flight and wait lists", async () => {
      expect(await store.flowKeyList({ accountId: "acc" })).toEqual([]);
      await publish(store, [
        ...[1, 2, 3].map(() => aKeyedMessage("acc", NOW, { key: "b", parallelism: 1, periodSec: 1 })),
        aKeyedMessage("acc", NOW, { key: "a", rate: 5, periodSec: 60 }),
        aKeyedMessage("free", NOW, { key: "other", parallelism: 2, periodSec: 1 }),
      ]);
      await store.messageLeaseDue({ now: NOW, limit: 100, owner: "a", leaseUntil: NOW + 60_000 });
      await store.flowKeyPin({ accountId: "acc", key: "a", now: NOW, parallelism: 4 });
      const keys = await store.flowKeyList({ accountId: "acc" });
      expect(keys.map((k) => k.key)).toEqual(["a", "b"]);
      expect(keys[0]).toMatchObject({
        accountId: "acc",
        parallelism: 4,
        rate: 5,
        periodSec: 60,
        pinnedParallelism: true,
        pinnedRate: false,
        paused: false,
        parallelismCount: 1,
        waitListSize: 0,
      });
      expect(keys[1]).toMatchObject({ parallelism: 1, parallelismCount: 1, waitListSize: 2, pinnedParallelism: false });
      expect(keys[1]).not.toHaveProperty("rate");
      // Each key reads as flowKeyGet reads it.
      for (const k of keys) expect(await store.flowKeyGet({ accountId: "acc", key: k.key })).toEqual(k);
    });
  });
}
