import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/domain/message.js";
import type { DlqResponse, Store } from "../../src/store/store.js";
import { adapters } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";

/** The dead letter queue store methods (reference §1.8) against every adapter. */

const message = (accountId: string, over: Partial<NewMessage> = {}): NewMessage =>
  aMessage(accountId, {
    state: "CREATED",
    body: Buffer.from("payload"),
    spec: { method: "POST", headers: { "X-A": ["1"] }, retries: 0 },
    ...over,
  });

for (const adapter of adapters) {
  describe(`dead letter queue store: ${adapter.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let dlqSeq = 0;
    beforeEach(async () => {
      ({ store, dispose } = await adapter.open());
      await store.accountInsert({ account: anAccount("acc-1") });
      await store.accountInsert({ account: anAccount("acc-2") });
    });
    afterEach(async () => {
      await dispose();
    });

    /** Publishes, claims and fails the message at `failedAt`: its DLQ entry is written by messageFinish. */
    async function failed(m: NewMessage, failedAt: number, response: Partial<DlqResponse> = {}): Promise<string> {
      await store.messageInsertMany({ items: [{ message: m }], now: NOW, dedupWindowMs: 0 });
      const [leased] = await store.messageLeaseDue({ now: NOW, limit: 1, owner: "A", leaseUntil: NOW + 60_000 });
      expect(leased?.id).toBe(m.id);
      const dlqId = `${failedAt}-${++dlqSeq}`;
      const applied = await store.messageFinish({
        message: leased!,
        owner: "A",
        now: failedAt,
        outcome: {
          kind: "failed",
          dlqId,
          response: {
            status: 500,
            headers: { "Content-Type": ["text/plain"] },
            body: Buffer.from("boom"),
            ...response,
          },
        },
        logs: [],
        newMessages: [],
      });
      expect(applied).toBe(true);
      return dlqId;
    }

    const ids = (p: { entries: { dlqId: string }[] }) => p.entries.map((e) => e.dlqId);

    it("keeps the failed message and its last response, scoped to its account", async () => {
      const m = message("acc-1", {
        topicName: "t",
        endpointName: "e",
        callerIp: "10.0.0.1",
        spec: {
          method: "PUT",
          headers: { "X-A": ["1"] },
          retries: 2,
          labels: ["l1"],
          flowControl: { key: "fk", periodSec: 1, rate: 5 },
        },
      });
      const dlqId = await failed(m, NOW + 5);
      const entry = await store.dlqGet({ accountId: "acc-1", dlqId });
      expect(entry).toMatchObject({
        dlqId,
        failedAt: NOW + 5,
        message: { id: m.id, url: m.url, topicName: "t", endpointName: "e", callerIp: "10.0.0.1", spec: m.spec },
        response: { status: 500, headers: { "Content-Type": ["text/plain"] } },
      });
      expect(entry!.message.body!.toString()).toBe("payload");
      expect(entry!.response.body.toString()).toBe("boom");
      expect(await store.dlqGet({ accountId: "acc-2", dlqId })).toBeUndefined();

      const network = await failed(message("acc-1"), NOW + 6, { status: undefined, error: "connection refused" });
      const refused = await store.dlqGet({ accountId: "acc-1", dlqId: network });
      expect(refused!.response.error).toBe("connection refused");
      expect(refused!.response.status).toBeUndefined();
    });

    it("lists with filters, in both orders, page by page", async () => {
      const a = await failed(message("acc-1", { url: "http://127.0.0.1:9/a", queueName: "q" }), NOW + 1);
      const b = await failed(message("acc-1", { url: "http://127.0.0.1:9/b" }), NOW + 2, { status: 404 });
      const c = await failed(
        message("acc-1", { spec: { method: "POST", headers: {}, retries: 0, labels: ["x", "y"] }, scheduleId: "s1" }),
        NOW + 3,
      );
      const other = await failed(message("acc-2"), NOW + 4);
      type Filter = Parameters<Store["dlqList"]>[0]["filter"];
      const list = (filter: Filter, order: "earliestFirst" | "latestFirst" = "earliestFirst") =>
        store.dlqList({ accountId: "acc-1", filter, count: 10, order });

      expect(ids(await list({}))).toEqual([a, b, c]);
      expect(ids(await list({}, "latestFirst"))).toEqual([c, b, a]);
      expect(ids(await list({ url: ["http://127.0.0.1:9/b"] }))).toEqual([b]);
      expect(ids(await list({ responseStatus: [404, 418] }))).toEqual([b]);
      expect(ids(await list({ dlqIds: [a, c, other] }))).toEqual([a, c]);
      expect(ids(await list({ label: ["y"] }))).toEqual([c]);
      expect(ids(await list({ queueName: ["q"] }))).toEqual([a]);
      expect(ids(await list({ scheduleId: ["s1"] }))).toEqual([c]);
      expect(ids(await list({ fromDate: NOW + 2, toDate: NOW + 3 }))).toEqual([b, c]);
      const byMessage = (await store.dlqGet({ accountId: "acc-1", dlqId: b }))!.message.id;
      expect(ids(await list({ messageIds: [byMessage] }))).toEqual([b]);

      for (const order of ["earliestFirst", "latestFirst"] as const) {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 5; page++) {
          const query = { accountId: "acc-1", filter: {}, count: 2, order, ...(cursor ? { cursor } : {}) };
          const p = await store.dlqList(query);
          seen.push(...ids(p));
          cursor = p.cursor;
          if (!cursor) break;
        }
        expect(seen).toEqual(order === "earliestFirst" ? [a, b, c] : [c, b, a]);
      }
    });

    it("deletes by id, by filter page by page, and everything; counts and lists accounts", async () => {
      const entries: string[] = [];
      for (let i = 0; i < 5; i++) {
        entries.push(await failed(message("acc-1", { queueName: i < 4 ? "q" : "r" }), NOW + i));
      }
      await failed(message("acc-2"), NOW);
      expect(await store.accountDlqCount({ accountId: "acc-1" })).toBe(5);
      expect((await store.dlqAccountIds()).sort()).toEqual(["acc-1", "acc-2"]);

      expect(await store.dlqDelete({ accountId: "acc-2", filter: { dlqIds: [entries[0]!] } })).toEqual({ deleted: 0 });
      expect(await store.dlqDelete({ accountId: "acc-1", filter: { dlqIds: [entries[0]!] } })).toEqual({ deleted: 1 });

      const first = await store.dlqDelete({ accountId: "acc-1", filter: { queueName: ["q"] }, count: 2 });
      expect(first.deleted).toBe(2);
      expect(first.cursor).toBeDefined();
      const filter = { queueName: ["q"] };
      const second = await store.dlqDelete({ accountId: "acc-1", filter, count: 2, cursor: first.cursor! });
      expect(second).toEqual({ deleted: 1 });
      expect(ids(await store.dlqList({ accountId: "acc-1", filter: {}, count: 10, order: "earliestFirst" }))).toEqual([
        entries[4],
      ]);

      expect(await store.dlqDelete({ accountId: "acc-1", filter: {} })).toEqual({ deleted: 1 });
      expect(await store.accountDlqCount({ accountId: "acc-1" })).toBe(0);
      expect(await store.dlqAccountIds()).toEqual(["acc-2"]);
    });

    it("trims by retention first, then the oldest beyond the size cap, at most `limit` per call", async () => {
      const entries: string[] = [];
      for (let i = 0; i < 8; i++) entries.push(await failed(message("acc-1"), NOW + i * 1000));
      // Two failed before the retention cut-off, then three more over a cap of 3; one call deletes at most 4.
      expect(await store.dlqTrim({ accountId: "acc-1", before: NOW + 2000, maxSize: 3, limit: 4 })).toBe(4);
      expect(ids(await store.dlqList({ accountId: "acc-1", filter: {}, count: 10, order: "earliestFirst" }))).toEqual(
        entries.slice(4),
      );
      expect(await store.dlqTrim({ accountId: "acc-1", before: NOW, maxSize: 3, limit: 4 })).toBe(1);
      expect(await store.dlqTrim({ accountId: "acc-1", before: NOW, maxSize: 3, limit: 4 })).toBe(0);
      expect(ids(await store.dlqList({ accountId: "acc-1", filter: {}, count: 10, order: "earliestFirst" }))).toEqual(
        entries.slice(5),
      );
    });
  });
}
