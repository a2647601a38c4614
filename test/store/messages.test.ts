import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { logEntry } from "../../src/domain/log.js";
import type { NewMessage } from "../../src/domain/message.js";
import type { Store } from "../../src/store/store.js";
import { adapters } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";

const account = anAccount("acc-1", { token: "t1" });

const message = (over: Partial<NewMessage> = {}): NewMessage =>
  aMessage(account.id, { body: Buffer.from("b"), spec: { method: "POST", headers: {}, retries: 3 }, ...over });

for (const adapter of adapters) {
  describe(`store conformance: ${adapter.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose } = await adapter.open());
      await store.accountInsert({ account });
    });
    afterEach(async () => {
      await dispose();
    });

    const insert = (...messages: NewMessage[]) =>
      store.messageInsertMany({ items: messages.map((m) => ({ message: m })), now: NOW, dedupWindowMs: 600_000 });

    it("inserts, reads back and scopes messages by account", async () => {
      const m = message({ spec: { method: "PUT", headers: { "X-A": ["1"] }, retries: 2, labels: ["l"] } });
      const [r] = await insert(m);
      expect(r).toMatchObject({ messageId: m.id, deduplicated: false });
      const got = await store.messageGet({ accountId: account.id, id: m.id });
      expect(got).toMatchObject({ id: m.id, url: m.url, state: "CREATED", spec: m.spec, retried: 0 });
      expect(got!.body!.toString()).toBe("b");
      expect(await store.messageGet({ accountId: "other", id: m.id })).toBeUndefined();
    });

    it("deduplicates within the window and not after it", async () => {
      const a = message();
      const b = message();
      const items = (m: NewMessage, now: number) =>
        store.messageInsertMany({ items: [{ message: m, dedupKey: "k" }], now, dedupWindowMs: 1000 });
      expect((await items(a, NOW))[0]).toMatchObject({ messageId: a.id, deduplicated: false });
      expect((await items(b, NOW + 999))[0]).toMatchObject({ messageId: a.id, deduplicated: true });
      expect((await items(b, NOW + 1000))[0]).toMatchObject({ messageId: b.id, deduplicated: false });
    });

    it("leases no message past its destination's share of the node, walking past that destination's rows", async () => {
      const hung = "http://127.0.0.1:4000";
      // The hung destination's rows come first in due order; one is written in another form than its origin.
      const stuck = Array.from({ length: 6 }, (_, i) => message({ url: `${hung}/s/${i}`, dueAt: NOW - 100 + i }));
      const oddForm = message({ url: "HTTP://127.0.0.1:4000/odd", dueAt: NOW - 50 });
      const others = [1, 2].map((i) => message({ url: `http://127.0.0.1:5000/o${i}`, dueAt: NOW - 10 + i }));
      const later = message({ url: `${hung}/later`, dueAt: NOW + 5000 });
      await insert(...stuck, oddForm, ...others, later);
      const lease = (owner: string, inUse: [string, number][]) =>
        store.messageLeaseDue({ now: NOW, limit: 10, owner, leaseUntil: NOW + 1000, destinations: { share: 3, inUse } });

      // At its share: none of its rows, whatever their form; the others all.
      const a = await lease("A", [[hung, 3]]);
      expect(a.map((m) => m.id)).toEqual(others.map((m) => m.id));
      // Room for two: its two oldest, then its rows stay due.
      const b = await lease("B", [[hung, 1]]);
      expect(b.map((m) => m.id)).toEqual([stuck[0]!.id, stuck[1]!.id]);
      // The rows left due do not arm the dispatcher's timer when it asks for later ones only.
      expect(await store.messageNextDueAt({ now: NOW })).toBe(stuck[2]!.dueAt);
      expect(await store.messageNextDueAt({ now: NOW, after: NOW })).toBe(later.dueAt);
      // Without shares (another caller, or a node with room): due order as ever.
      const c = await store.messageLeaseDue({ now: NOW, limit: 10, owner: "C", leaseUntil: NOW + 1000 });
      expect(c.map((m) => m.id)).toEqual([...stuck.slice(2), oddForm].map((m) => m.id));
    });

    it("leases only due messages, oldest due first, each to one owner", async () => {
      const late = message({ dueAt: NOW + 10_000 });
      const first = message({ dueAt: NOW - 2 });
      const second = message({ dueAt: NOW - 1 });
      await insert(late, second, first);
      const a = await store.messageLeaseDue({ now: NOW, limit: 1, owner: "A", leaseUntil: NOW + 1000 });
      const b = await store.messageLeaseDue({ now: NOW, limit: 10, owner: "B", leaseUntil: NOW + 1000 });
      expect(a.map((m) => m.id)).toEqual([first.id]);
      expect(b.map((m) => m.id)).toEqual([second.id]);
      expect(b[0]!.leaseOwner).toBe("B");
      expect(await store.messageNextDueAt({ now: NOW })).toBe(late.dueAt);
    });

    it("rescues expired leases, and drops the outcome of a node that lost its lease", async () => {
      const m = message();
      await insert(m);
      const [leased] = await store.messageLeaseDue({ now: NOW, limit: 1, owner: "A", leaseUntil: NOW + 1000 });
      expect(await store.messageReleaseLeases({ now: NOW + 500, expiredOnly: true, exceptOwner: "x" })).toBe(0);
      expect(await store.messageRenewLeases({ owner: "B", ids: [m.id], leaseUntil: NOW + 2000 })).toBe(0);
      expect(await store.messageRenewLeases({ owner: "A", ids: ["msg_other"], leaseUntil: NOW + 2000 })).toBe(0);
      expect(await store.messageRenewLeases({ owner: "A", ids: [m.id], leaseUntil: NOW + 2000 })).toBe(1);
      expect(await store.messageReleaseLeases({ now: NOW + 1500, expiredOnly: true, exceptOwner: "x" })).toBe(0);
      expect(await store.messageReleaseLeases({ now: NOW + 2500, expiredOnly: true, exceptOwner: "x" })).toBe(1);
      const [again] = await store.messageLeaseDue({ now: NOW + 2500, limit: 1, owner: "B", leaseUntil: NOW + 9000 });
      expect(again!.id).toBe(m.id);
      const stale = await store.messageFinish({
        message: leased!,
        owner: "A",
        now: NOW + 3000,
        outcome: { kind: "delivered" },
        logs: [],
        newMessages: [],
      });
      expect(stale).toBe(false);
      const ok = await store.messageFinish({
        message: again!,
        owner: "B",
        now: NOW + 3000,
        outcome: { kind: "delivered" },
        logs: [logEntry(again!, "DELIVERED", NOW + 3000)],
        newMessages: [],
      });
      expect(ok).toBe(true);
      expect(await store.messageGet({ accountId: account.id, id: m.id })).toBeUndefined();
    });

    it("schedules a retry, moves a failure to the DLQ, and honours a cancel recorded during an attempt", async () => {
      const retry = message();
      const fail = message();
      const cancel = message();
      await insert(retry, fail, cancel);
      const leased = await store.messageLeaseDue({ now: NOW, limit: 10, owner: "A", leaseUntil: NOW + 1000 });
      const byId = new Map(leased.map((m) => [m.id, m]));
      const finish = (id: string, outcome: Parameters<Store["messageFinish"]>[0]["outcome"]) =>
        store.messageFinish({ message: byId.get(id)!, owner: "A", now: NOW, outcome, logs: [], newMessages: [] });

      await finish(retry.id, { kind: "retry", dueAt: NOW + 5000 });
      expect(await store.messageGet({ accountId: account.id, id: retry.id })).toMatchObject({
        state: "RETRY",
        retried: 1,
        dueAt: NOW + 5000,
      });

      await finish(fail.id, {
        kind: "failed",
        dlqId: `${NOW}-1`,
        response: { status: 500, headers: {}, body: Buffer.from("no") },
      });
      expect(await store.messageGet({ accountId: account.id, id: fail.id })).toBeUndefined();

      expect(await store.messageCancel({ accountId: account.id, now: NOW, filter: { messageIds: [cancel.id] } })).toBe(
        1,
      );
      await finish(cancel.id, { kind: "retry", dueAt: NOW + 5000 });
      expect(await store.messageGet({ accountId: account.id, id: cancel.id })).toBeUndefined();
      const states = (
        await store.logList({
          accountId: account.id,
          filter: { messageIds: [cancel.id] },
          count: 10,
          order: "earliestFirst",
        })
      ).logs.map((l) => l.state);
      expect(states).toEqual(["CREATED", "ACTIVE", "CANCEL_REQUESTED", "CANCELED"]);
    });

    it("cancels by filter with an exact count", async () => {
      const labelled = (l: string) => message({ spec: { method: "POST", headers: {}, retries: 0, labels: [l] } });
      await insert(labelled("x"), labelled("x"), labelled("y"));
      expect(await store.messageCancel({ accountId: account.id, now: NOW, filter: { label: ["x"] }, count: 1 })).toBe(
        1,
      );
      expect(await store.messageCancel({ accountId: account.id, now: NOW, filter: { label: ["x"] } })).toBe(1);
      expect(await store.messageCancel({ accountId: account.id, now: NOW, filter: {} })).toBe(1);
    });

    it("rotates signing keys and updates credentials", async () => {
      const rotated = await store.accountRotateKeys({ id: account.id, next: "sig_brand_new_key_000" });
      expect(rotated).toMatchObject({
        currentSigningKey: account.nextSigningKey,
        nextSigningKey: "sig_brand_new_key_000",
      });
      const updated = await store.accountUpdate({ id: account.id, patch: { token: "t2" } });
      expect(updated.token).toBe("t2");
      expect(await store.accountGetByToken({ token: "t1" })).toBeUndefined();
      expect((await store.accountGetByToken({ token: "t2" }))!.id).toBe(account.id);
    });

    it("trims logs older than the retention", async () => {
      const m = message();
      await insert(m);
      // The CREATED entry is the row's (docs/states.md "The message row"): no `logs` row to delete, and the entry is
      // past retention all the same.
      await store.retentionDelete({ table: "logs", before: NOW + 1, limit: 1000 });
      expect(
        (await store.logList({ accountId: account.id, filter: {}, count: 10, order: "latestFirst" })).logs,
      ).toEqual([]);
    });
  });
}
