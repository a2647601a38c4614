import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newMessageId } from "../../src/domain/ids.js";
import type { Message, NewMessage } from "../../src/domain/message.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { Store } from "../../src/store/store.js";

/**
 * The FIFO rule of queues lives in the store: these tests drive it through the Store interface only, the way the
 * dispatcher does, including two nodes sharing one database file.
 */
const ACCOUNT = "acc_1";
let dir: string;
let stores: Store[];
let now: number;

function open(): Store {
  const store = openSqliteStore({ path: join(dir, "ferry.db"), synchronous: "NORMAL" });
  stores.push(store);
  return store;
}

function message(queueName: string | undefined, overrides: Partial<NewMessage> = {}): NewMessage {
  const m: NewMessage = {
    id: newMessageId(now),
    accountId: ACCOUNT,
    kind: "message",
    state: queueName !== undefined ? "QUEUED" : "CREATED",
    url: "http://127.0.0.1:9/",
    body: undefined,
    spec: { method: "POST", headers: {}, retries: 3 },
    createdAt: now,
    notBefore: 0,
    dueAt: now,
    retried: 0,
    ...overrides,
  };
  if (queueName !== undefined) m.queueName = queueName;
  return m;
}

async function insert(store: Store, ...messages: NewMessage[]) {
  await store.messageInsertMany({ items: messages.map((m) => ({ message: m })), now, dedupWindowMs: 0 });
}

const lease = (store: Store, owner = "node_a") =>
  store.messageLeaseDue({ now, limit: 100, owner, leaseUntil: now + 60_000 });

function finish(
  store: Store,
  m: Message,
  outcome: "delivered" | "retry",
  newMessages: NewMessage[] = [],
  owner = "node_a",
) {
  return store.messageFinish({
    message: m,
    owner,
    now,
    outcome: outcome === "delivered" ? { kind: "delivered" } : { kind: "retry", dueAt: now },
    logs: [],
    newMessages,
  });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ferry-store-"));
  stores = [];
  now = 1_700_000_000_000;
});
afterEach(async () => {
  for (const s of stores) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("queue slots", () => {
  it("lets only the head of a parallelism-1 queue be claimed, in arrival order", async () => {
    const store = open();
    const [a, b, c] = [message("q"), message("q"), message("q")];
    await insert(store, a, b, c);
    expect((await store.queueGet({ accountId: ACCOUNT, name: "q" }))?.parallelism).toBe(1);

    const first = await lease(store);
    expect(first.map((m) => m.id)).toEqual([a.id]);
    expect(await lease(store)).toEqual([]);
    await finish(store, first[0]!, "retry");
    const retried = await lease(store);
    expect(retried.map((m) => m.id)).toEqual([a.id]); // a retry keeps the slot
    await finish(store, retried[0]!, "delivered");
    expect((await lease(store)).map((m) => m.id)).toEqual([b.id]);
  });

  it("holds a delivered queue message until its callbacks finished", async () => {
    const store = open();
    const [a, b] = [message("q"), message("q")];
    await insert(store, a, b);
    const [leasedA] = await lease(store);
    const callback = message(undefined, { kind: "callback", parentId: a.id });
    await finish(store, leasedA!, "delivered", [callback]);

    // Only the callback may go: a is HELD (invisible as a message, still in its slot), b waits.
    expect(await store.messageGet({ accountId: ACCOUNT, id: a.id })).toMatchObject({ state: "HELD" });
    expect((await store.queueGet({ accountId: ACCOUNT, name: "q" }))?.lag).toBe(1);
    const leasedCallback = await lease(store);
    expect(leasedCallback.map((m) => m.id)).toEqual([callback.id]);
    expect(await store.messageCancel({ accountId: ACCOUNT, now, filter: { messageIds: [a.id] } })).toBe(0);

    await finish(store, leasedCallback[0]!, "delivered");
    expect(await store.messageGet({ accountId: ACCOUNT, id: a.id })).toBeUndefined();
    expect((await lease(store)).map((m) => m.id)).toEqual([b.id]);
  });

  it("releases a HELD message when its callback is cancelled", async () => {
    const store = open();
    const [a, b] = [message("q"), message("q")];
    await insert(store, a, b);
    const [leasedA] = await lease(store);
    const callback = message(undefined, { kind: "callback", parentId: a.id, dueAt: now + 60_000 });
    await finish(store, leasedA!, "delivered", [callback]);
    expect(await store.messageCancel({ accountId: ACCOUNT, now, filter: { messageIds: [callback.id] } })).toBe(1);
    expect((await lease(store)).map((m) => m.id)).toEqual([b.id]);
  });

  it("widens and narrows with the queue's parallelism, and a paused queue starts nothing", async () => {
    const store = open();
    const ms = Array.from({ length: 5 }, () => message("q"));
    await insert(store, ...ms);
    await store.queueUpsert({ accountId: ACCOUNT, name: "q", parallelism: 3, paused: false, now, maxQueues: 10 });
    await store.queueUpsert({ accountId: ACCOUNT, name: "q", parallelism: 2, paused: true, now, maxQueues: 10 });
    expect(await lease(store)).toEqual([]);
    await store.queueSetPaused({ accountId: ACCOUNT, name: "q", paused: false, now });
    expect((await lease(store)).map((m) => m.id)).toEqual([ms[0]!.id, ms[1]!.id]);
  });

  it("keeps the rule with two nodes on one database", async () => {
    const nodeA = open();
    const nodeB = open();
    const [a, b] = [message("shared"), message("shared")];
    await insert(nodeA, a);
    await insert(nodeB, b);
    const leasedByA = await lease(nodeA, "node_a");
    expect(leasedByA.map((m) => m.id)).toEqual([a.id]);
    expect(await lease(nodeB, "node_b")).toEqual([]);
    await finish(nodeA, leasedByA[0]!, "delivered", [], "node_a");
    expect((await lease(nodeB, "node_b")).map((m) => m.id)).toEqual([b.id]);
  });

  it("counts queues against max_queues, but updates an existing one at the limit", async () => {
    const store = open();
    const upsert = (name: string, parallelism: number) =>
      store.queueUpsert({ accountId: ACCOUNT, name, parallelism, paused: false, now, maxQueues: 1 });
    expect(await upsert("one", 1)).toBe("created");
    expect(await upsert("two", 1)).toBe("max_queues");
    expect(await upsert("one", 5)).toBe("updated");
    expect(await store.queueEnsure({ accountId: ACCOUNT, name: "two", now, maxQueues: 1 })).toBe("max_queues");
    expect(await store.queueEnsure({ accountId: ACCOUNT, name: "one", now, maxQueues: 1 })).toBe("exists");
  });
});
