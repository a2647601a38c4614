import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { searchableText } from "../../src/search/documents.js";
import { hashEmbed } from "../../src/search/embedder.js";
import type { DocumentWrite } from "../../src/store/search-document-store.js";
import type { Store } from "../../src/store/store.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { aSearchIndex } from "./factories.js";
import { adapters, openPostgresTestStores } from "./adapters.js";

/**
 * The semantic side answers from vectors held in the store's memory (docs/search.md "Vector cache"): every write
 * through the store, a refused write and a write through another node (PostgreSQL) must show in the next query.
 * The queries are purely semantic (semanticWeight 1), so only the cached vectors decide the order.
 */

const EMBEDDER = { name: "ferry-hash-v1", dimension: 128 };

const index = aSearchIndex("i1");

function doc(id: string, text: string): DocumentWrite {
  const content = { text };
  return { id, contentJson: JSON.stringify(content), metadataJson: null, text: searchableText(content), embedding: hashEmbed(text) };
}

const DOCS = Array.from({ length: 50 }, (_, i) => doc(`d${i}`, `plain filler document number ${i}`));

const upsert = (store: Store, docs: DocumentWrite[], namespace = "ns", maxDocuments = -1) =>
  store.searchDocUpsert({ indexId: "i1", namespace, docs, embedder: EMBEDDER, maxDocuments });

const query = (store: Store, text: string, namespace = "ns") =>
  store.searchDocQuery({
    indexId: "i1",
    namespace,
    terms: [],
    embedding: hashEmbed(text),
    embedder: EMBEDDER,
    semanticWeight: 1,
    topK: 3,
  });

const nearest = async (store: Store, text: string, namespace = "ns") =>
  (await query(store, text, namespace)).map((h) => h.id);

for (const adapter of adapters) {
  describe(`cached vectors on ${adapter.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose } = await adapter.open());
      await store.searchIndexInsert({ index });
      await upsert(store, DOCS);
      await upsert(store, DOCS, "other");
    });
    afterEach(async () => dispose());

    it("follows upserts, replacements, deletes and resets made through the store", async () => {
      expect((await nearest(store, "zebra crossing"))[0]).not.toBe("z1");
      await upsert(store, [doc("z1", "zebra crossing")]);
      expect((await nearest(store, "zebra crossing"))[0]).toBe("z1");
      // d7 replaced by the best match; z1 replaced by something else.
      await upsert(store, [doc("d7", "zebra crossing zebra"), doc("z1", "quantum chromodynamics")]);
      expect((await nearest(store, "zebra crossing zebra"))[0]).toBe("d7");
      expect((await nearest(store, "quantum chromodynamics"))[0]).toBe("z1");
      expect(await store.searchDocDelete({ indexId: "i1", namespace: "ns", selector: { ids: ["d7"] } })).toBe(1);
      const after = await query(store, "zebra crossing zebra");
      expect(after.map((h) => h.id)).not.toContain("d7");
      // Scores are normalised by the best candidate: a deleted vector must not be that candidate.
      expect(after[0]!.score).toBe(1);
      // The other name was never touched by these writes.
      expect(await nearest(store, "quantum chromodynamics", "other")).not.toContain("z1");
      await store.searchDocReset({ indexId: "i1", namespace: "ns" });
      expect(await nearest(store, "quantum chromodynamics")).toEqual([]);
      await upsert(store, [doc("y1", "yellow submarine")]);
      expect(await nearest(store, "yellow submarine")).toEqual(["y1"]);
      await store.searchDocReset({ indexId: "i1" });
      expect(await nearest(store, "plain filler", "other")).toEqual([]);
    });

    it("keeps a hybrid search inside its index name, whichever names and indexes share the store", async () => {
      await store.searchDocReset({ indexId: "i1", namespace: "other" });
      await store.searchIndexInsert({ index: { ...index, id: "i2", endpoint: "http://127.0.0.1:1/search/slug-i2" } });
      const walrus = doc("w1", "walrus walrus");
      await store.searchDocUpsert({ indexId: "i2", namespace: "ns", docs: [walrus], embedder: EMBEDDER, maxDocuments: -1 });
      await upsert(store, [doc("w2", "walrus")], "other");
      const hybrid = (namespace: string, indexId = "i1") =>
        store.searchDocQuery({
          indexId,
          namespace,
          terms: ["walrus"],
          embedding: hashEmbed("walrus"),
          embedder: EMBEDDER,
          semanticWeight: 0.5,
          topK: 5,
        });
      expect((await hybrid("ns")).map((h) => h.id)).not.toContain("w1");
      expect((await hybrid("ns")).map((h) => h.id)).not.toContain("w2");
      expect((await hybrid("other"))[0]!.id).toBe("w2");
      expect((await hybrid("ns", "i2"))[0]!.id).toBe("w1");
      // Alone in the store once the others are gone: the same answers.
      await store.searchDocReset({ indexId: "i2" });
      await store.searchDocReset({ indexId: "i1", namespace: "other" });
      await upsert(store, [doc("w3", "walrus tusks")]);
      expect((await hybrid("ns"))[0]!.id).toBe("w3");
      expect((await hybrid("ns")).map((h) => h.id)).not.toContain("w2");
    });

    it("keeps nothing of a refused write", async () => {
      await nearest(store, "warm the cache");
      // Replaces d3 with a strong match, then passes max_vector_count: the whole write is refused.
      const refused = upsert(store, [doc("d3", "volcanic eruption"), doc("new", "volcanic eruption ash")], "ns", 50);
      await expect(refused).rejects.toThrow(/max_vector_count/);
      const best = await nearest(store, "volcanic eruption");
      expect(best).not.toContain("d3");
      expect(best).not.toContain("new");
    });
  });
}

describe.runIf(postgresAvailable())("cached vectors across PostgreSQL nodes", () => {
  it("a node sees the writes another node made after it cached the vectors", async () => {
    const opened = await openPostgresTestStores();
    try {
      const a = opened.store;
      const b = await opened.more();
      await a.searchIndexInsert({ index });
      await upsert(a, DOCS);
      expect((await nearest(a, "zebra crossing"))[0]).not.toBe("z1");
      await upsert(b, [doc("z1", "zebra crossing"), doc("d4", "lunar eclipse")]);
      expect((await nearest(a, "zebra crossing"))[0]).toBe("z1");
      expect((await nearest(a, "lunar eclipse"))[0]).toBe("d4");
      await b.searchDocDelete({ indexId: "i1", namespace: "ns", selector: { prefix: "z" } });
      expect(await nearest(a, "zebra crossing")).not.toContain("z1");
      // And the other way round, once B has cached too.
      expect(await nearest(b, "lunar eclipse")).toContain("d4");
      await upsert(a, [doc("d4", "plain filler again")]);
      expect((await nearest(b, "lunar eclipse"))[0]).not.toBe("d4");
    } finally {
      await opened.dispose();
    }
  });
});
