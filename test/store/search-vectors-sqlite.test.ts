import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { searchableText } from "../../src/search/documents.js";
import { hashEmbed } from "../../src/search/embedder.js";
import { loadVectorFunctions } from "../../src/store/sqlite/vector-functions.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";

/** SQLite keeps its vec0 nearest-neighbour table in step with the documents: deletes, resets and cascades. */

const dir = mkdtempSync(join(tmpdir(), "ferry-search-vec-"));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("leaves no vector behind after deletes, resets and deleting the index", async () => {
  const path = join(dir, "ferry.db");
  const store = openSqliteStore({ path, synchronous: "NORMAL" });
  const index = {
    id: "i1",
    customerId: "c@test.local",
    name: "n",
    endpoint: "http://127.0.0.1:1/search/s-1",
    type: "payg" as const,
    region: "eu-west-1" as const,
    partnerEmail: "",
    token: "t",
    readOnlyToken: "r",
    inputEnrichmentEnabled: false,
    creationTime: 1,
  };
  await store.searchIndexInsert({ index });
  const docs = Array.from({ length: 30 }, (_, i) => {
    const content = { text: `document ${i}` };
    const text = searchableText(content);
    return { id: `d${i}`, contentJson: JSON.stringify(content), metadataJson: null, text, embedding: hashEmbed(text) };
  });
  const embedder = { name: "ferry-hash-v1", dimension: 128 };
  for (const namespace of ["a", "b"]) {
    await store.searchDocUpsert({ indexId: "i1", namespace, docs, embedder, maxDocuments: -1 });
  }
  // Replacing documents keeps one vector each.
  await store.searchDocUpsert({ indexId: "i1", namespace: "a", docs: docs.slice(0, 5), embedder, maxDocuments: -1 });

  const reader = new Database(path, { readonly: true });
  loadVectorFunctions(reader);
  const count = () =>
    (reader.prepare("SELECT COUNT(*) AS n FROM search_vectors_knn128").get() as { n: number }).n;
  expect(count()).toBe(60);
  expect(await store.searchDocDelete({ indexId: "i1", namespace: "a", selector: { prefix: "d1" } })).toBe(11);
  expect(count()).toBe(49);
  await store.searchDocReset({ indexId: "i1", namespace: "a" });
  expect(count()).toBe(30);
  expect(await store.searchIndexDelete({ customerId: "c@test.local", id: "i1" })).toBe(true);
  expect(count()).toBe(0);
  expect((reader.prepare("SELECT COUNT(*) AS n FROM search_documents_fts").get() as { n: number }).n).toBe(0);
  reader.close();
  await store.close();
});
