import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { queryTerms, searchableText } from "../../src/search/documents.js";
import { hashEmbed } from "../../src/search/embedder.js";
import { parseFilter } from "../../src/search/filter.js";
import { openPgContext } from "../../src/store/postgres/context.js";
import { searchDocumentQueries as pgQueries } from "../../src/store/postgres/search-documents.js";
import type { SearchDocumentStore, SearchQuery } from "../../src/store/search-document-store.js";
import { openSqlite } from "../../src/store/sqlite/context.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import { searchDocumentQueries as sqliteQueries } from "../../src/store/sqlite/search-documents.js";
import type { Store } from "../../src/store/store.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { aSearchIndex } from "./factories.js";
import { openPostgresTestStores } from "./adapters.js";

/**
 * The in-memory scan (src/search/vector-cache.ts) and the database's own scan, used for a name too large for that
 * memory, answer alike: same documents in the same order with the same scores, with and without filters.
 */

const EMBEDDER = { name: "ferry-hash-v1", dimension: 128 };
const index = aSearchIndex("i1");
const WORDS = ["river", "stone", "bridge", "lantern", "harbor", "meadow", "copper", "violet", "thunder", "garden"];

async function fill(store: Store): Promise<void> {
  await store.searchIndexInsert({ index });
  const docs = Array.from({ length: 400 }, (_, i) => {
    const content = { text: `${WORDS[i % 10]} ${WORDS[(i * 7) % 10]} ${WORDS[(i * 3 + 1) % 10]} item${i}`, n: i };
    const text = searchableText(content);
    return { id: `d${i}`, contentJson: JSON.stringify(content), metadataJson: JSON.stringify({ odd: i % 2 === 1 }), text, embedding: hashEmbed(text) };
  });
  await store.searchDocUpsert({ indexId: "i1", namespace: "ns", docs, embedder: EMBEDDER, maxDocuments: -1 });
}

async function expectSameAnswers(cached: SearchDocumentStore, scanned: SearchDocumentStore): Promise<void> {
  for (const text of ["river stone", "lanter", "violet thunder garden", "item17", "nothing matches"]) {
    for (const semanticWeight of [0, 0.5, 0.75, 1]) {
      for (const filter of [undefined, "n < 200 AND @metadata.odd = true"]) {
        const q: SearchQuery = {
          indexId: "i1",
          namespace: "ns",
          terms: queryTerms(text),
          embedding: hashEmbed(text),
          embedder: EMBEDDER,
          semanticWeight,
          topK: 10,
          ...(filter ? { filter: parseFilter(filter)! } : {}),
        };
        const a = await cached.searchDocQuery(q);
        const b = await scanned.searchDocQuery(q);
        const where = `${text} w=${semanticWeight} ${filter ?? ""}`;
        // Scores agree to float32 precision (sqlite-vec computes in float32); ties may come in another order.
        expect(a.length, where).toBe(b.length);
        for (const [i, hit] of a.entries()) expect(Math.abs(hit.score - b[i]!.score), where).toBeLessThan(1e-4);
        const last = a.at(-1)?.score ?? 0;
        const above = (hits: typeof a) => new Map(hits.filter((h) => h.score > last + 1e-4).map((h) => [h.id, h.score]));
        const [inA, inB] = [above(a), above(b)];
        expect([...inA.keys()].sort(), where).toEqual([...inB.keys()].sort());
        for (const [id, score] of inA) expect(Math.abs(score - inB.get(id)!), where).toBeLessThan(1e-4);
      }
    }
  }
}

const dir = mkdtempSync(join(tmpdir(), "ferry-search-scan-"));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("SQLite answers alike from memory and from its own scan", async () => {
  const path = join(dir, "ferry.db");
  const store = openSqliteStore({ path, synchronous: "NORMAL" });
  const ctx = openSqlite(path, "NORMAL");
  try {
    await fill(store);
    await expectSameAnswers(store, sqliteQueries(ctx, 0));
  } finally {
    await ctx.close();
    await store.close();
  }
});

it.runIf(postgresAvailable())("PostgreSQL answers alike from memory and from reading every vector", async () => {
  const opened = await openPostgresTestStores();
  const ctx = openPgContext({ connectionString: opened.url, poolSize: 2 });
  try {
    await fill(opened.store);
    await expectSameAnswers(opened.store, pgQueries(ctx, 0));
  } finally {
    await ctx.close();
    await opened.dispose();
  }
});
