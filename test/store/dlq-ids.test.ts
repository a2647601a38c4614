import { afterEach, describe, expect, it } from "vitest";
import { DlqIdMinter } from "../../src/domain/dlq-id.js";
import type { Message, NewMessage } from "../../src/domain/message.js";
import type { Store } from "../../src/store/store.js";
import { type AdapterFactory, adapters } from "./adapters.js";
import { aMessage } from "./factories.js";

/**
 * DLQ ids are unique across nodes (domain/dlq-id.ts): two stores on one database, each a "node", take node numbers
 * and finish failed messages into the DLQ at the same instant with ids they mint themselves. Every entry lands.
 */
const NOW = 1_800_000_000_000;
const PER_NODE = 200;

/** Two stores ("nodes") on one fresh database: two SQLite connections to one file, or two PostgreSQL pools. */
async function openPair(adapter: AdapterFactory): Promise<{ stores: [Store, Store]; dispose(): Promise<void> }> {
  const opened = await adapter.open();
  return { stores: [opened.store, await opened.more()], dispose: opened.dispose };
}

const message = (id: string): NewMessage => aMessage("acc", { id, body: Buffer.from("b"), at: NOW });

for (const adapter of adapters) {
  describe(`DLQ ids across nodes: ${adapter.name}`, () => {
    let dispose: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await dispose?.();
      dispose = undefined;
    });

    it("node numbers are never handed out twice, even when taken at once", async () => {
      const opened = await openPair(adapter);
      dispose = opened.dispose;
      const [a, b] = opened.stores;
      const numbers = await Promise.all([a, b, a, b, a, b].map((s) => s.nodeNumberTake()));
      expect(new Set(numbers).size).toBe(numbers.length);
    });

    it("two nodes minting in the same millisecond finish every failed message into the DLQ", async () => {
      const opened = await openPair(adapter);
      dispose = opened.dispose;
      const [a, b] = opened.stores;
      const [nodeA, nodeB] = await Promise.all([a.nodeNumberTake(), b.nodeNumberTake()]);
      const minters = [new DlqIdMinter(nodeA), new DlqIdMinter(nodeB)];
      // Each node's messages, leased to it at insert (as a publish on that node does). A PostgreSQL insert leaves
      // the message to the claim when another node holds the account's flow row: those are claimed right after.
      const owned: Message[][] = await Promise.all(
        [a, b].map(async (store, node) => {
          const items = Array.from({ length: PER_NODE }, (_, i) => ({
            message: message(`msg_${node}_${i}`),
            leaseOwner: `node-${node}`,
            leaseUntil: NOW + 60_000,
          }));
          const results = await store.messageInsertMany({ items, now: NOW, dedupWindowMs: 0 });
          return results.map((r) => r.message!).filter((m) => m.leaseOwner === `node-${node}`);
        }),
      );
      for (const [node, store] of [a, b].entries()) {
        for (let i = 0; i < 10; i++) {
          const claimed = await store.messageLeaseDue({
            now: NOW,
            limit: 500,
            owner: `node-${node}`,
            leaseUntil: NOW + 60_000,
          });
          if (claimed.length === 0) break;
          owned[node]!.push(...claimed);
        }
      }
      expect(owned[0]!.length + owned[1]!.length).toBe(2 * PER_NODE);
      // Both nodes finish all of theirs at once, at the same pinned instant.
      const finishes = [a, b].flatMap((store, node) =>
        owned[node]!.map((m) =>
          store.messageFinish({
            message: m,
            owner: `node-${node}`,
            now: NOW,
            outcome: {
              kind: "failed",
              dlqId: minters[node]!.next(NOW),
              response: { status: 500, headers: {}, body: Buffer.from("x") },
            },
            logs: [],
            newMessages: [],
          }),
        ),
      );
      expect((await Promise.all(finishes)).every(Boolean)).toBe(true);
      expect(await a.accountDlqCount({ accountId: "acc" })).toBe(2 * PER_NODE);
      const { entries } = await a.dlqList({ accountId: "acc", filter: {}, count: 1000, order: "earliestFirst" });
      expect(new Set(entries.map((e) => e.dlqId)).size).toBe(2 * PER_NODE);
      for (const e of entries) expect(e.dlqId).toMatch(new RegExp(`^${NOW}-\\d+$`));
    });
  });
}
