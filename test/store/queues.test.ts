import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message, NewMessage } from "../../src/domain/message.js";
import type { Store } from "../../src/store/store.js";
import { adapters, type OpenedStore } from "./adapters.js";
import { aMessage, anAccount } from "./factories.js";

/**
 * The FIFO rule of queues lives in the store: these tests drive it through the Store interface only, the way the
 * dispatcher does, against both adapters, including several nodes (stores) sharing one database.
 */
const ACCOUNT = "acc_1";
const T0 = 1_700_000_000_000;

const account = anAccount(ACCOUNT, { createdAt: T0 });

let now = T0;

const message = (queueName: string | undefined, overrides: Partial<NewMessage> = {}): NewMessage =>
  aMessage(ACCOUNT, {
    at: now,
    url: "http://127.0.0.1:9/",
    spec: { method: "POST", headers: {}, retries: 3 },
    ...(queueName !== undefined ? { queueName } : {}),
    ...overrides,
  });

async function insert(store: Store, ...messages: NewMessage[]) {
  await store.messageInsertMany({ items: messages.map((m) => ({ message: m })), now, dedupWindowMs: 0 });
}

const lease = (store: Store, owner = "node_a", limit = 100) =>
  store.messageLeaseDue({ now, limit, owner, leaseUntil: now + 60_000 });

function finish(
  store: Store,
  m: Message,
  outcome: "delivered" | "retry" | "failed",
  newMessages: NewMessage[] = [],
  owner = "node_a",
) {
  const decided =
    outcome === "delivered"
      ? ({ kind: "delivered" } as const)
      : outcome === "retry"
        ? ({ kind: "retry", dueAt: now } as const)
        : ({
            kind: "failed",
            dlqId: `dlq_${m.id}`,
            response: { status: 500, headers: {}, body: Buffer.from("no") },
          } as const);
  return store.messageFinish({ message: m, owner, now, outcome: decided, logs: [], newMessages });
}

const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id);

for (const adapter of adapters) {
  describe(`queue slots: ${adapter.name}`, () => {
    let nodes: OpenedStore;
    let store: Store;
    beforeEach(async () => {
      now = T0;
      nodes = await adapter.open();
      store = nodes.store;
      await store.accountInsert({ account });
    });
    afterEach(async () => {
      await nodes.dispose();
    });

    it("lets only the head of a parallelism-1 queue be claimed, in arrival order", async () => {
      const [a, b, c] = [message("q"), message("q"), message("q")];
      await insert(store, a, b, c);
      expect((await store.queueGet({ accountId: ACCOUNT, name: "q" }))?.parallelism).toBe(1);
      expect((await store.queueGet({ accountId: ACCOUNT, name: "q" }))?.lag).toBe(3);

      const first = await lease(store);
      expect(ids(first)).toEqual([a.id]);
      expect(await lease(store)).toEqual([]);
      await finish(store, first[0]!, "retry");
      const retried = await lease(store);
      expect(ids(retried)).toEqual([a.id]); // a retry keeps the slot
      await finish(store, retried[0]!, "delivered");
      expect(ids(await lease(store))).toEqual([b.id]);
      expect((await store.queueGet({ accountId: ACCOUNT, name: "q" }))?.lag).toBe(2);
    });

    it("holds a delivered queue message until its callbacks finished", async () => {
      const [a, b] = [message("q"), message("q")];
      await insert(store, a, b);
      const [leasedA] = await lease(store);
      const callback = message(undefined, { kind: "callback", parentId: a.id });
      await finish(store, leasedA!, "delivered", [callback]);

      // Only the callback may go: a is HELD (invisible as a message, still in its slot), b waits.
      expect(await store.messageGet({ accountId: ACCOUNT, id: a.id })).toMatchObject({ state: "HELD" });
      expect((await store.queueGet({ accountId: ACCOUNT, name: "q" }))?.lag).toBe(1);
      const leasedCallback = await lease(store);
      expect(ids(leasedCallback)).toEqual([callback.id]);
      expect(await store.messageCancel({ accountId: ACCOUNT, now, filter: { messageIds: [a.id] } })).toBe(0);

      await finish(store, leasedCallback[0]!, "delivered");
      expect(await store.messageGet({ accountId: ACCOUNT, id: a.id })).toBeUndefined();
      expect(ids(await lease(store))).toEqual([b.id]);
    });

    it("holds a failed queue message (already in the DLQ) until its failure callback finished", async () => {
      const [a, b] = [message("q", { spec: { method: "POST", headers: {}, retries: 0 } }), message("q")];
      await insert(store, a, b);
      const [leasedA] = await lease(store);
      const failureCallback = message(undefined, { kind: "failure_callback", parentId: a.id });
      expect(await finish(store, leasedA!, "failed", [failureCallback])).toBe(true);
      expect(await store.messageGet({ accountId: ACCOUNT, id: a.id })).toMatchObject({ state: "HELD" });
      const leasedCallback = await lease(store);
      expect(ids(leasedCallback)).toEqual([failureCallback.id]);
      // A retry of the callback keeps the parent HELD; its final outcome releases it.
      await finish(store, leasedCallback[0]!, "retry");
      expect(ids(await lease(store))).toEqual([failureCallback.id]);
      expect(await store.messageGet({ accountId: ACCOUNT, id: a.id })).toMatchObject({ state: "HELD" });
      await finish(store, { ...leasedCallback[0]!, retried: 1 }, "delivered");
      expect(ids(await lease(store))).toEqual([b.id]);
    });

    it("holds a queue message whose earlier attempt's callback is still pending", async () => {
      const [a, b] = [message("q"), message("q")];
      await insert(store, a, b);
      const [first] = await lease(store);
      // The first attempt fails and produces a callback due later; the second attempt delivers.
      const callback = message(undefined, { kind: "callback", parentId: a.id, dueAt: now + 60_000 });
      await finish(store, first!, "retry", [callback]);
      const [second] = await lease(store);
      expect(second!.id).toBe(a.id);
      await finish(store, second!, "delivered");
      expect(await store.messageGet({ accountId: ACCOUNT, id: a.id })).toMatchObject({ state: "HELD" });
      expect(await lease(store)).toEqual([]);
      now += 60_000;
      const [cb] = await lease(store);
      expect(cb!.id).toBe(callback.id);
      await finish(store, cb!, "delivered");
      expect(ids(await lease(store))).toEqual([b.id]);
    });

    it("releases a HELD message when its callback is cancelled", async () => {
      const [a, b] = [message("q"), message("q")];
      await insert(store, a, b);
      const [leasedA] = await lease(store);
      const callback = message(undefined, { kind: "callback", parentId: a.id, dueAt: now + 60_000 });
      await finish(store, leasedA!, "delivered", [callback]);
      expect(await store.messageCancel({ accountId: ACCOUNT, now, filter: { messageIds: [callback.id] } })).toBe(1);
      expect(ids(await lease(store))).toEqual([b.id]);
    });

    it("promotes the next message when waiting ones are cancelled, honours a cancel of the one in flight", async () => {
      const ms = Array.from({ length: 4 }, () => message("q"));
      await insert(store, ...ms);
      const [head] = await lease(store);
      // The head is in flight: it is only marked; the second is QUEUED and goes at once.
      expect(
        await store.messageCancel({ accountId: ACCOUNT, now, filter: { messageIds: [ms[0]!.id, ms[1]!.id] } }),
      ).toBe(2);
      expect(await lease(store)).toEqual([]);
      expect(await finish(store, head!, "retry")).toBe(true); // the cancel wins over the retry
      expect(await store.messageGet({ accountId: ACCOUNT, id: ms[0]!.id })).toBeUndefined();
      expect(ids(await lease(store))).toEqual([ms[2]!.id]);
      expect(await store.messageCancel({ accountId: ACCOUNT, now, filter: { queueName: ["q"] } })).toBe(2);
      expect((await store.queueGet({ accountId: ACCOUNT, name: "q" }))?.lag).toBe(1); // the one in flight
    });

    it("widens and narrows with the queue's parallelism, and a paused queue starts nothing", async () => {
      const ms = Array.from({ length: 5 }, () => message("q"));
      await insert(store, ...ms);
      await store.queueUpsert({ accountId: ACCOUNT, name: "q", parallelism: 3, paused: false, now, maxQueues: 10 });
      await store.queueUpsert({ accountId: ACCOUNT, name: "q", parallelism: 2, paused: true, now, maxQueues: 10 });
      expect(await lease(store)).toEqual([]);
      await store.queueSetPaused({ accountId: ACCOUNT, name: "q", paused: false, now });
      expect(ids(await lease(store))).toEqual([ms[0]!.id, ms[1]!.id]);
      expect(await store.queueGet({ accountId: ACCOUNT, name: "q" })).toMatchObject({
        name: "q",
        parallelism: 2,
        paused: false,
        lag: 5,
      });
    });

    it("keeps a retry waiting while its queue is paused, and lets it go on resume", async () => {
      const [a, b] = [message("q"), message("q")];
      await insert(store, a, b);
      const [leased] = await lease(store);
      await store.queueSetPaused({ accountId: ACCOUNT, name: "q", paused: true, now });
      await finish(store, leased!, "retry");
      expect(await store.messageGet({ accountId: ACCOUNT, id: a.id })).toMatchObject({ state: "QUEUED", retried: 1 });
      expect(await lease(store)).toEqual([]);
      await store.queueSetPaused({ accountId: ACCOUNT, name: "q", paused: false, now });
      expect(await store.messageGet({ accountId: ACCOUNT, id: a.id })).toMatchObject({ state: "RETRY" });
      expect(ids(await lease(store))).toEqual([a.id]);
    });

    it("behaves as a default queue once its record is deleted, and recreates it on the next enqueue", async () => {
      await store.queueUpsert({ accountId: ACCOUNT, name: "q", parallelism: 2, paused: false, now, maxQueues: 10 });
      const ms = Array.from({ length: 3 }, () => message("q"));
      await insert(store, ...ms);
      expect(await store.queueDelete({ accountId: ACCOUNT, name: "q" })).toBe(true);
      expect(await store.queueDelete({ accountId: ACCOUNT, name: "q" })).toBe(false);
      const leased = await lease(store);
      expect(ids(leased)).toEqual([ms[0]!.id, ms[1]!.id]);
      await finish(store, leased[0]!, "delivered");
      await finish(store, leased[1]!, "delivered");
      expect(ids(await lease(store))).toEqual([ms[2]!.id]);
      await insert(store, message("q"));
      expect(await store.queueGet({ accountId: ACCOUNT, name: "q" })).toMatchObject({ parallelism: 1, paused: false });
    });

    it("keeps the rule with two nodes on one database", async () => {
      const nodeA = store;
      const nodeB = await nodes.more();
      const [a, b] = [message("shared"), message("shared")];
      await insert(nodeA, a);
      await insert(nodeB, b);
      const leasedByA = await lease(nodeA, "node_a");
      expect(ids(leasedByA)).toEqual([a.id]);
      expect(await lease(nodeB, "node_b")).toEqual([]);
      await finish(nodeA, leasedByA[0]!, "delivered", [], "node_a");
      expect(ids(await lease(nodeB, "node_b"))).toEqual([b.id]);
    });

    it("counts queues against max_queues, but updates an existing one at the limit", async () => {
      const upsert = (name: string, parallelism: number) =>
        store.queueUpsert({ accountId: ACCOUNT, name, parallelism, paused: false, now, maxQueues: 1 });
      expect(await upsert("one", 1)).toBe("created");
      expect(await upsert("two", 1)).toBe("max_queues");
      expect(await upsert("one", 5)).toBe("updated");
      expect(await store.queueEnsure({ accountId: ACCOUNT, name: "two", now, maxQueues: 1 })).toBe("max_queues");
      expect(await store.queueEnsure({ accountId: ACCOUNT, name: "one", now, maxQueues: 1 })).toBe("exists");
      expect(await store.queueEnsure({ accountId: "acc_2", name: "two", now, maxQueues: 1 })).toBe("created");
      expect((await store.queueList({ accountId: ACCOUNT })).map((q) => [q.name, q.parallelism])).toEqual([["one", 5]]);
    });

    it("never exceeds max_queues when several nodes create queues at once", async () => {
      const others = [await nodes.more(), await nodes.more()];
      const all = [store, ...others];
      const common = (i: number) => ({ accountId: ACCOUNT, name: `q${i}`, now, maxQueues: 4 });
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          i % 2 === 0
            ? all[i % 3]!.queueUpsert({ ...common(i), parallelism: 1, paused: false })
            : all[i % 3]!.queueEnsure(common(i)),
        ),
      );
      expect(results.filter((r) => r === "created")).toHaveLength(4);
      expect(results.filter((r) => r === "max_queues")).toHaveLength(8);
      expect(await store.queueList({ accountId: ACCOUNT })).toHaveLength(4);
    });

    it("keeps FIFO order and parallelism exactly while two nodes publish, claim and finish at once", async () => {
      const nodeB = await nodes.more();
      const snapshot = headChecker(nodes);
      for (const parallelism of [1, 3]) {
        const queue = `p${parallelism}`;
        await store.queueUpsert({ accountId: ACCOUNT, name: queue, parallelism, paused: false, now, maxQueues: 10 });
        const total = 60;
        const published: string[] = [];
        const started: string[] = [];
        let finished = 0;
        let violations: string[] = [];
        let publishing = true;

        // Publishers on both nodes at once: concurrent inserts must not let a later arrival overtake.
        const publisher = async (node: Store) => {
          for (let i = 0; i < total / 2; i++) {
            const m = message(queue);
            await insert(node, m);
            published.push(m.id);
          }
        };
        const worker = async (node: Store, owner: string) => {
          for (let round = 0; round < 2000 && finished < total; round++) {
            const leased = await lease(node, owner, 5);
            started.push(...ids(leased));
            if (leased.length === 0) await new Promise((r) => setTimeout(r, 2));
            await Promise.all(
              leased.map(async (m, i) => {
                // Outcomes of one node land in one batch and across nodes at once; some retry first.
                if ((m.id.charCodeAt(m.id.length - 1) + i) % 7 === 0 && m.retried === 0) {
                  expect(await finish(node, m, "retry", [], owner)).toBe(true);
                  return;
                }
                expect(await finish(node, m, "delivered", [], owner)).toBe(true);
                finished++;
              }),
            );
          }
        };
        const checker = async () => {
          while (publishing || finished < total) {
            violations = violations.concat(await snapshot(queue, parallelism));
            await new Promise((r) => setTimeout(r, 1));
          }
        };
        const publishers = Promise.all([publisher(store), publisher(nodeB)]).then(() => {
          publishing = false;
        });
        await Promise.all([publishers, worker(store, "node_a"), worker(nodeB, "node_b"), checker()]);

        expect(finished).toBe(total);
        expect(violations).toEqual([]);
        // A message starts for the first time only from the head of the queue: fewer than `parallelism` earlier
        // arrivals may start after it (within the head, claims of messages due at once go in any order).
        const firstStarts = started.filter((id, i) => started.indexOf(id) === i);
        const arrival = await arrivalOrder(store, published);
        expect([...firstStarts].sort()).toEqual([...arrival].sort());
        const startIndex = new Map(firstStarts.map((id, i) => [id, i]));
        arrival.forEach((id, i) => {
          const overtaken = arrival.slice(0, i).filter((earlier) => startIndex.get(earlier)! > startIndex.get(id)!);
          expect(overtaken.length, `${id} started ahead of ${overtaken.join(", ")}`).toBeLessThan(parallelism);
        });
        if (parallelism === 1) {
          // A retry keeps the slot: nothing else started in between, so the start sequence has only repeats.
          expect(started.filter((id, i) => i === 0 || started[i - 1] !== id)).toEqual(arrival);
        }
      }
    });

    it("releases a HELD parent when two nodes finish its last callbacks at once", async () => {
      const nodeB = await nodes.more();
      for (let round = 0; round < 5; round++) {
        const [a, b] = [message("q"), message("q")];
        await insert(store, a, b);
        const [leasedA] = await lease(store, "node_a");
        expect(leasedA!.id).toBe(a.id);
        const callbacks = [0, 1].map(() => message(undefined, { kind: "callback", parentId: a.id }));
        await finish(store, leasedA!, "delivered", callbacks, "node_a");
        const [c1] = await lease(store, "node_a", 1);
        const [c2] = await lease(nodeB, "node_b", 1);
        expect([c1!.id, c2!.id].sort()).toEqual(ids(callbacks).sort());
        await Promise.all([
          finish(store, c1!, "delivered", [], "node_a"),
          finish(nodeB, c2!, "delivered", [], "node_b"),
        ]);
        expect(await store.messageGet({ accountId: ACCOUNT, id: a.id })).toBeUndefined();
        const [next] = await lease(nodeB, "node_b");
        expect(next!.id).toBe(b.id);
        await finish(nodeB, next!, "delivered", [], "node_b");
      }
    });
  });
}

/** The messages' ids in the order the store recorded their arrival (their CREATED log entries). */
async function arrivalOrder(store: Store, published: string[]): Promise<string[]> {
  const filter = { messageIds: published, state: ["CREATED"] };
  const { logs } = await store.logList({ accountId: ACCOUNT, filter, count: 1000, order: "earliestFirst" });
  expect(logs).toHaveLength(published.length);
  return logs.map((l) => l.messageId);
}

/**
 * Reads the queue's rows in ONE statement (a committed snapshot, behind the stores' back) and reports every row that
 * is not QUEUED although it lies outside the first `parallelism` unfinished rows: a slot given twice, or a later
 * arrival promoted before an earlier one.
 */
function headChecker(opened: OpenedStore) {
  return async (queue: string, parallelism: number): Promise<string[]> => {
    const rows = await opened.sql<{ seq: string; state: string }>(
      // Live rows only: delivered rows stay until retention, as DELIVERED (docs/states.md "The message row").
      `SELECT seq, state FROM messages WHERE queue_name = $1 AND kind = 'message'
         AND state NOT IN ('DELIVERED', 'FAILED', 'CANCELED') ORDER BY seq`,
      [queue],
    );
    return rows.flatMap((r, i) => (i >= parallelism && r.state !== "QUEUED" ? [`${r.seq}:${r.state}@${i}`] : []));
  };
}
