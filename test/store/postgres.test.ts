import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/domain/message.js";
import { isUnavailableError } from "../../src/store/postgres/connection.js";
import { openPostgresStore } from "../../src/store/postgres/index.js";
import type { Store } from "../../src/store/store.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { openPostgresTestStores } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";

const account = anAccount("acc-pg", { token: "t-pg" });

const message = (over: Partial<NewMessage> = {}): NewMessage =>
  aMessage(account.id, { body: Buffer.from("b"), spec: { method: "POST", headers: {}, retries: 3 }, ...over });

describe.runIf(postgresAvailable())("PostgreSQL store: several nodes on one database", () => {
  let a: Store;
  let b: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    const opened = await openPostgresTestStores();
    a = opened.store;
    b = await opened.more();
    dispose = opened.dispose;
    await a.accountInsert({ account });
  });
  afterEach(async () => {
    await dispose();
  });

  const insert = async (store: Store, messages: NewMessage[]) => {
    for (let i = 0; i < messages.length; i += 500) {
      const items = messages.slice(i, i + 500).map((m) => ({ message: m }));
      await store.messageInsertMany({ items, now: NOW, dedupWindowMs: 0 });
    }
  };

  it("two stores (two pools) leasing concurrently never get the same message", async () => {
    const messages = Array.from({ length: 2000 }, (_, i) => message({ dueAt: NOW - (i % 100) }));
    await insert(a, messages);
    const leasedBy = new Map<string, string[]>();
    // Three claim loops per node at once: claims of one node also run in different transactions.
    const worker = async (store: Store, owner: string) => {
      for (let round = 0; round < 1000; round++) {
        const batch = await store.messageLeaseDue({ now: NOW, limit: 37, owner, leaseUntil: NOW + 60_000 });
        if (batch.length === 0) return;
        for (const m of batch) {
          expect(m.leaseOwner).toBe(owner);
          leasedBy.set(m.id, [...(leasedBy.get(m.id) ?? []), owner]);
        }
      }
    };
    await Promise.all([
      worker(a, "A1"),
      worker(a, "A2"),
      worker(a, "A3"),
      worker(b, "B1"),
      worker(b, "B2"),
      worker(b, "B3"),
    ]);
    expect(leasedBy.size).toBe(messages.length);
    const twice = [...leasedBy.entries()].filter(([, owners]) => owners.length > 1);
    expect(twice).toEqual([]);
    const owners = new Set([...leasedBy.values()].map((o) => o[0]![0]));
    expect(owners).toEqual(new Set(["A", "B"])); // both nodes did get work
  });

  it("a node that abandons its leases has its messages taken over once they expire", async () => {
    const messages = [message(), message(), message()];
    await insert(a, messages);
    const dead = await a.messageLeaseDue({ now: NOW, limit: 10, owner: "dead-node", leaseUntil: NOW + 2000 });
    expect(dead).toHaveLength(3);
    expect(await b.messageLeaseDue({ now: NOW + 1000, limit: 10, owner: "B", leaseUntil: NOW + 9000 })).toEqual([]);
    expect(await b.messageReleaseLeases({ now: NOW + 1999, expiredOnly: true, exceptOwner: "B" })).toBe(0);
    expect(await b.messageReleaseLeases({ now: NOW + 2001, expiredOnly: true, exceptOwner: "B" })).toBe(3);
    const taken = await b.messageLeaseDue({ now: NOW + 2001, limit: 10, owner: "B", leaseUntil: NOW + 9000 });
    expect(taken.map((m) => m.id).sort()).toEqual(messages.map((m) => m.id).sort());
    // The dead node's late outcome is dropped; the new owner's counts.
    const late = {
      owner: "dead-node",
      now: NOW + 2500,
      outcome: { kind: "delivered" as const },
      logs: [],
      newMessages: [],
    };
    expect(await a.messageFinish({ message: dead[0]!, ...late })).toBe(false);
    expect(await b.messageFinish({ ...late, message: taken[0]!, owner: "B" })).toBe(true);
  });

  it("tells subscribed nodes when an account changes on another node (NOTIFY ferry_accounts)", async () => {
    let resolveChange: () => void = () => {};
    const nextChange = () =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no account notification within 5 s")), 5000);
        resolveChange = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    let changed = nextChange();
    const unsubscribe = b.subscribeAccountChanges!(() => resolveChange());
    await changed; // once when the LISTEN connection is up (changes missed before it are covered)
    changed = nextChange();
    await a.accountRotateKeys({ id: account.id, next: "sig_rotated_key_000000" });
    await changed;
    unsubscribe();
  });

  it("wakes subscribed nodes with NOTIFY when messages become due", async () => {
    let wakes = 0;
    let resolveWake: () => void = () => {};
    const unsubscribe = b.subscribeDue!(() => {
      wakes++;
      resolveWake();
    });
    const nextWake = () =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no wake-up within 5 s")), 5000);
        resolveWake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    await nextWake(); // once when the LISTEN connection is up (notifications missed before it are covered)
    const woken = nextWake();
    await insert(a, [message()]);
    await woken;
    // Leases released by the rescuer wake the others too.
    await a.messageLeaseDue({ now: NOW, limit: 10, owner: "dead-node", leaseUntil: NOW + 1000 });
    const again = nextWake();
    expect(await a.messageReleaseLeases({ now: NOW + 5000, expiredOnly: true, exceptOwner: "A" })).toBe(1);
    await again;
    unsubscribe();
    expect(wakes).toBeGreaterThanOrEqual(3);
  });

  it("returns BIGINT columns as numbers and bodies as Buffers", async () => {
    const m = message({ dueAt: NOW + 123, body: Buffer.from([0, 1, 2, 255]) });
    await insert(a, [m]);
    const got = (await b.messageGet({ accountId: account.id, id: m.id }))!;
    expect(got.dueAt).toBe(NOW + 123);
    expect(got.createdAt).toBe(NOW);
    expect([...got.body!]).toEqual([0, 1, 2, 255]);
    expect(await b.messageNextDueAt({ now: NOW })).toBe(NOW + 123);
  });
});

describe("PostgreSQL store: database unreachable", () => {
  it("fails calls with unavailable: true (HTTP 503) instead of hanging or crashing", async () => {
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    const store = openPostgresStore({ connectionString: "postgres://postgres@127.0.0.1:1/none", poolSize: 2 });
    const read = store.accountGet({ id: "x" });
    await expect(read).rejects.toMatchObject({ unavailable: true });
    const write = store.accountRotateKeys({ id: "x", next: "sig_next_key_00000000" });
    await expect(write).rejects.toMatchObject({ unavailable: true });
    const unsubscribe = store.subscribeDue!(() => {});
    unsubscribe();
    await store.close();
  });

  it("classifies connection failures apart from statement errors", () => {
    const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });
    expect(isUnavailableError(withCode("ECONNREFUSED"))).toBe(true);
    expect(isUnavailableError(withCode("57P01", "terminating connection due to administrator command"))).toBe(true);
    expect(isUnavailableError(withCode("08006"))).toBe(true);
    expect(isUnavailableError(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isUnavailableError(withCode("23505", "duplicate key value"))).toBe(false);
    expect(isUnavailableError(withCode("42P01", "relation does not exist"))).toBe(false);
  });
});
