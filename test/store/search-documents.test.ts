import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { searchableText } from "../../src/search/documents.js";
import { hashEmbed } from "../../src/search/embedder.js";
import { parseFilter } from "../../src/search/filter.js";
import type { DocumentWrite } from "../../src/store/search-document-store.js";
import type { Store } from "../../src/store/store.js";
import { adapters } from "./adapters.js";
import { aSearchIndex } from "./factories.js";

/** The search data plane's storage on every adapter: filters translated to each store's SQL, limits, embedders. */

const EMBEDDER = { name: "ferry-hash-v1", dimension: 128 };

function doc(id: string, content: Record<string, unknown>, metadata: Record<string, unknown> | null = null): DocumentWrite {
  const text = searchableText(content);
  return {
    id,
    contentJson: JSON.stringify(content),
    metadataJson: metadata === null ? null : JSON.stringify(metadata),
    text,
    embedding: hashEmbed(text),
  };
}

const DOCS = [
  doc("a", { name: "Istanbul", pop: 15, tags: ["big", "old"], geo: { lat: 41 }, list: [1, 2, 3], ok: true }, { kind: "city", n: 1 }),
  doc("b", { name: "Izmir", pop: 4, tags: ["coast"], geo: { lat: 38 }, list: [4, 5], ok: false }, { kind: "city", n: 2 }),
  doc("c", { name: "Ankara", pop: 5, tags: ["capital", "old"], list: [6], ok: true }, { kind: "capital", n: 3 }),
  doc("d", { name: "ankara-river", pop: 0.5, tags: [] }, null),
];

for (const adapter of adapters) {
  describe(`search documents on ${adapter.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose } = await adapter.open());
      await store.searchIndexInsert({ index: aSearchIndex("i1") });
      await store.searchDocUpsert({ indexId: "i1", namespace: "ns", docs: DOCS, embedder: EMBEDDER, maxDocuments: -1 });
    });
    afterEach(async () => dispose());

    const matching = async (filter: string) =>
      (
        await store.searchDocFetch({ indexId: "i1", namespace: "ns", selector: { filter: parseFilter(filter)! }, limit: 100 })
      ).map((d) => d!.id);

    it("translates every operator of the filter grammar", async () => {
      const cases: [string, string[]][] = [
        ["name = 'Izmir'", ["b"]],
        ["name != 'Izmir'", ["a", "c", "d"]],
        ["pop < 5", ["b", "d"]],
        ["pop <= 5", ["b", "c", "d"]],
        ["pop > 5", ["a"]],
        ["pop >= 4", ["a", "b", "c"]],
        ["name GLOB 'I*'", ["a", "b"]],
        ["name GLOB 'i*'", []],
        ["name GLOB '[AI]?[km]*'", ["b", "c"]],
        ["name NOT GLOB 'I*'", ["c", "d"]],
        ["name IN ('Ankara', 'Izmir', 'Paris')", ["b", "c"]],
        ["pop IN (15, 5)", ["a", "c"]],
        ["name NOT IN ('Ankara')", ["a", "b", "d"]],
        ["tags CONTAINS 'old'", ["a", "c"]],
        ["tags NOT CONTAINS 'old'", ["b", "d"]],
        ["list CONTAINS 5", ["b"]],
        ["HAS FIELD geo.lat", ["a", "b"]],
        ["HAS NOT FIELD geo", ["c", "d"]],
        ["geo.lat > 40", ["a"]],
        ["list[0] = 4", ["b"]],
        ["list[#-1] = 3", ["a"]],
        ["tags[1] = 'old'", ["a", "c"]],
        ["ok = true", ["a", "c"]],
        ["ok = 1", ["a", "c"]],
        ["ok = 0", ["b"]],
        ["@metadata.kind = 'city'", ["a", "b"]],
        ["@metadata.n >= 2 AND @metadata.kind = 'city'", ["b"]],
        ["HAS FIELD @metadata.kind", ["a", "b", "c"]],
        ["pop < 1 OR name = 'Izmir' AND pop > 100", ["d"]],
        ["(pop < 1 OR name = 'Izmir') AND pop < 100", ["b", "d"]],
      ];
      for (const [filter, ids] of cases) expect(await matching(filter), filter).toEqual(ids);
    });

    it("filters before ranking and honours the relevance floor", async () => {
      const query = (filter?: string, semanticWeight = 0.75) =>
        store.searchDocQuery({
          indexId: "i1",
          namespace: "ns",
          terms: ["ankara"],
          embedding: hashEmbed("ankara"),
          embedder: EMBEDDER,
          semanticWeight,
          topK: 10,
          ...(filter ? { filter: parseFilter(filter)! } : {}),
        });
      const all = await query();
      expect(all.slice(0, 2).map((h) => h.id).sort()).toEqual(["c", "d"]);
      expect((await query("@metadata.kind = 'capital'")).map((h) => h.id)).toEqual(["c"]);
      expect((await query(undefined, 0)).map((h) => h.id).sort()).toEqual(["c", "d"]);
      for (const h of all) {
        expect(h.score).toBeGreaterThan(0);
        expect(h.score).toBeLessThanOrEqual(1);
      }
    });

    it("refuses a document beyond max_vector_count, but a replacement is no new document", async () => {
      await expect(
        store.searchDocUpsert({ indexId: "i1", namespace: "ns", docs: [doc("e", { x: "y" })], embedder: EMBEDDER, maxDocuments: 4 }),
      ).rejects.toThrow(/max_vector_count exceeded: the index would hold 5 documents, its plan allows 4/);
      await store.searchDocUpsert({ indexId: "i1", namespace: "other", docs: [doc("a", { x: "y" })], embedder: EMBEDDER, maxDocuments: 5 });
      await store.searchDocUpsert({ indexId: "i1", namespace: "other", docs: [doc("a", { x: "z" })], embedder: EMBEDDER, maxDocuments: 5 });
      expect((await store.searchDocInfo({ indexId: "i1" })).namespaces).toEqual([
        { namespace: "ns", documents: 4 },
        { namespace: "other", documents: 1 },
      ]);
    });

    it("refuses documents and queries of another embedder or dimension", async () => {
      const other = { name: "openai:x", dimension: 3 };
      await expect(
        store.searchDocUpsert({ indexId: "i1", namespace: "ns", docs: [doc("e", { x: "y" })], embedder: other, maxDocuments: -1 }),
      ).rejects.toThrow(/was built by ferry-hash-v1 \(dimension 128\)/);
      await expect(
        store.searchDocQuery({ indexId: "i1", namespace: "ns", terms: [], embedding: new Float32Array(3), embedder: other, semanticWeight: 1, topK: 1 }),
      ).rejects.toThrow(/was built by ferry-hash-v1/);
      await store.searchDocReset({ indexId: "i1" });
      expect((await store.searchDocInfo({ indexId: "i1" })).namespaces).toEqual([]);
    });

    it("deletes an index's documents with the index", async () => {
      expect(await store.searchIndexDelete({ customerId: "owner@test.local", id: "i1" })).toBe(true);
      await store.searchIndexInsert({ index: aSearchIndex("i1") });
      expect(await store.searchDocInfo({ indexId: "i1" })).toEqual({ namespaces: [], bytes: 0 });
      expect(await store.searchDocFetch({ indexId: "i1", namespace: "ns", selector: { ids: ["a"] }, limit: 10 })).toEqual([undefined]);
    });

    it("counts usage per kind and refuses past the limit", async () => {
      const consume = (n: number, limit: number) =>
        store.searchUsageConsume({ indexId: "i1", kind: "query", n, now: 120_000, since: 0, limit });
      expect(await consume(3, 4)).toEqual({ allowed: true, used: 3 });
      expect(await consume(2, 4)).toEqual({ allowed: false, used: 3 });
      expect(await consume(1, 4)).toEqual({ allowed: true, used: 4 });
      expect(await store.searchUsageSeries({ indexId: "i1", from: 0, stepMs: 60_000, count: 3 })).toEqual([0, 0, 4]);
    });
  });
}
