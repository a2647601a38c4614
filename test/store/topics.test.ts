import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import type { TopicEndpoint } from "../../src/store/topic-store.js";
import { adapters, openPostgresTestStores } from "./adapters.js";

/** URL groups through the Store interface, on both adapters; limits must hold when several nodes write at once. */
const ACCOUNT = "acc_1";
const NOW = 1_700_000_000_000;
const url = (n: number | string) => `http://127.0.0.1:9/${n}`;

for (const adapter of adapters) {
  describe(`url groups: ${adapter.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose } = await adapter.open());
    });
    afterEach(async () => {
      await dispose();
    });

    const add = (name: string, endpoints: TopicEndpoint[], limits = { maxTopics: 10, maxEndpoints: 10 }, now = NOW) =>
      store.topicAddEndpoints({ accountId: ACCOUNT, name, endpoints, now, ...limits });
    const get = (name: string) => store.topicGet({ accountId: ACCOUNT, name });

    it("creates a group, upserts endpoints by URL in insertion order, and reads it back", async () => {
      expect(await add("orders", [{ name: "first", url: url("a") }, { url: url("b") }])).toEqual({ ok: true });
      const more = [{ name: "second", url: url("b") }, { url: url("a") }, { url: url("c") }];
      expect(await add("orders", more, undefined, NOW + 5)).toEqual({ ok: true });
      expect(await get("orders")).toEqual({
        name: "orders",
        createdAt: NOW,
        updatedAt: NOW + 5,
        endpoints: [{ name: "first", url: url("a") }, { name: "second", url: url("b") }, { url: url("c") }],
      });
      expect(await get("missing")).toBeUndefined();
      expect(await store.topicGet({ accountId: "acc_2", name: "orders" })).toBeUndefined();
    });

    it("refuses a name held by another endpoint, leaving the group as it was", async () => {
      await add("g", [{ name: "x", url: url("a") }]);
      expect(await add("g", [{ url: url("b") }, { name: "x", url: url("c") }])).toEqual({
        ok: false,
        reason: "endpoint_name_taken",
        endpointName: "x",
      });
      expect((await get("g"))!.endpoints).toEqual([{ name: "x", url: url("a") }]);
      // A refused first upsert creates no group either.
      expect(await add("h", [{ name: "y", url: url("a") }, { name: "y", url: url("b") }])).toMatchObject({ ok: false });
      expect(await get("h")).toBeUndefined();
    });

    it("counts max_topics and max_endpoints_per_topic", async () => {
      const limits = { maxTopics: 2, maxEndpoints: 2 };
      expect(await add("one", [{ url: url(1) }], limits)).toEqual({ ok: true });
      expect(await add("two", [{ url: url(1) }, { url: url(2) }], limits)).toEqual({ ok: true });
      expect(await add("three", [{ url: url(1) }], limits)).toEqual({ ok: false, reason: "max_topics" });
      expect(await add("two", [{ url: url(3) }], limits)).toEqual({ ok: false, reason: "max_endpoints" });
      expect(await add("two", [{ name: "renamed", url: url(2) }], limits)).toEqual({ ok: true }); // no new endpoint
      expect(await add("one", [{ url: url(1) }, { url: url(1) }, { url: url(2) }], limits)).toEqual({ ok: true });
      expect((await get("one"))!.endpoints).toEqual([{ url: url(1) }, { url: url(2) }]);
      expect(await get("three")).toBeUndefined();
    });

    it("removes endpoints by URL, by name or by both, and the group with its last endpoint", async () => {
      await add("g", [
        { name: "a", url: url("a") },
        { name: "b", url: url("b") },
        { name: "c", url: url("c") },
      ]);
      const remove = (endpoints: { url?: string; name?: string }[]) =>
        store.topicRemoveEndpoints({ accountId: ACCOUNT, name: "g", endpoints, now: NOW + 1 });
      expect(await remove([{ name: "c", url: url("a") }])).toBe("removed"); // both must match: nothing removed
      expect((await get("g"))!.endpoints).toHaveLength(3);
      expect(await remove([{ url: url("a") }, { name: "b" }])).toBe("removed");
      expect(await get("g")).toMatchObject({ updatedAt: NOW + 1, endpoints: [{ name: "c", url: url("c") }] });
      expect(await remove([{ name: "c", url: url("c") }])).toBe("deleted");
      expect(await get("g")).toBeUndefined();
      expect(await remove([{ url: url("c") }])).toBe("not_found");
    });

    it("sets and clears default headers, lists groups by name, and deletes one", async () => {
      await add("b", [{ url: url(1) }]);
      await add("a", [{ url: url(2) }]);
      await add("B", [{ url: url(3) }]);
      const headers = { "X-Env": ["prod", "eu"] };
      expect(await store.topicSetHeaders({ accountId: ACCOUNT, name: "a", headers, now: NOW + 2 })).toBe(true);
      expect(await get("a")).toMatchObject({ headers, updatedAt: NOW + 2 });
      expect(await store.topicSetHeaders({ accountId: ACCOUNT, name: "a", headers: {}, now: NOW + 3 })).toBe(true);
      expect((await get("a"))!.headers).toBeUndefined();
      expect(await store.topicSetHeaders({ accountId: ACCOUNT, name: "zz", headers, now: NOW })).toBe(false);

      const list = await store.topicList({ accountId: ACCOUNT });
      expect(list.map((t) => [t.name, t.endpoints.map((e) => e.url)])).toEqual([
        ["B", [url(3)]],
        ["a", [url(2)]],
        ["b", [url(1)]],
      ]);
      expect(await store.topicDelete({ accountId: ACCOUNT, name: "a" })).toBe(true);
      expect(await store.topicDelete({ accountId: ACCOUNT, name: "a" })).toBe(false);
      expect((await store.topicList({ accountId: ACCOUNT })).map((t) => t.name)).toEqual(["B", "b"]);
    });
  });
}

describe.runIf(adapters.some((a) => a.name === "postgres"))("url groups on several PostgreSQL nodes", () => {
  it("never exceeds max_topics or max_endpoints_per_topic when nodes add at once", async () => {
    const db = await openPostgresTestStores();
    try {
      const nodes = [db.store, await db.more(), await db.more()];
      const limits = { maxTopics: 3, maxEndpoints: 4 };
      const topics = await Promise.all(
        Array.from({ length: 9 }, (_, i) =>
          nodes[i % 3]!.topicAddEndpoints({
            accountId: ACCOUNT,
            name: `t${i}`,
            endpoints: [{ url: url(i) }],
            now: NOW,
            ...limits,
          }),
        ),
      );
      expect(topics.filter((r) => r.ok)).toHaveLength(3);
      expect(await db.store.topicList({ accountId: ACCOUNT })).toHaveLength(3);

      const [first] = await db.store.topicList({ accountId: ACCOUNT });
      const endpoints = await Promise.all(
        Array.from({ length: 9 }, (_, i) =>
          nodes[i % 3]!.topicAddEndpoints({
            accountId: ACCOUNT,
            name: first!.name,
            endpoints: [{ url: url(`e${i}`), name: `e${i}` }],
            now: NOW,
            ...limits,
          }),
        ),
      );
      expect(endpoints.filter((r) => r.ok)).toHaveLength(3); // it already had one
      expect((await db.store.topicGet({ accountId: ACCOUNT, name: first!.name }))!.endpoints).toHaveLength(4);
    } finally {
      await db.dispose();
    }
  });
});
