import { createRequire } from "node:module";
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { request } from "undici";
import { startFerry } from "../lib/ferry.js";
import { cpuSecondsOf } from "../lib/proc.js";
import { type BenchContext, pick, type Scenario } from "../lib/scenario.js";
import { formatNumber, percentile } from "../lib/stats.js";

/**
 * Search data plane (docs/search.md): documents of ~1 KB upserted through an index's endpoint, then hybrid queries,
 * at 10,000 and 100,000 documents, each against a ceiling measured in the same run on the same machine:
 * - ingest: the same documents inserted straight into a SQLite file with the same tables (FTS5 porter, a vector
 *   BLOB), 100 per transaction, synchronous=FULL: the raw store's insert rate (goal: Ferry ≥ 0.5× it);
 * - queries: the same query terms run directly on the FTS5 table of Ferry's own file (bm25, top 10), in process:
 *   the full-text engine alone, with no HTTP, no embedding and no vector scan (goal: Ferry's p99 ≤ 50 ms at 100k).
 */

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3") as typeof BetterSqlite3;

const ADMIN_EMAIL = "bench@ferry.local";
const ADMIN_KEY = "bench-admin-key-0123456789";
export const adminEnv = { FERRY_ADMIN_EMAIL: ADMIN_EMAIL, FERRY_ADMIN_API_KEY: ADMIN_KEY };
export const BATCH = 100;
export const WRITERS = 4;

/** A `fixed` search index (its per-second write limit, 10,000, stays above what this machine ingests). */
export async function createIndex(origin: string, attempt = 1): Promise<IndexHandle> {
  const retry = async () => {
    await new Promise((r) => setTimeout(r, 100));
    return createIndex(origin, attempt + 1);
  };
  let created: Awaited<ReturnType<typeof request>>;
  try {
    created = await request(`${origin}/v2/search`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${ADMIN_EMAIL}:${ADMIN_KEY}`).toString("base64")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ name: "bench", region: "eu-west-1", type: "fixed" }),
    });
  } catch (error) {
    // A node still starting may close the connection: bounded wait.
    if (attempt < 300) return retry();
    throw error;
  }
  const text = await created.body.text();
  // A node answers 503 while it is still starting (migrations, boot): bounded wait.
  if (created.statusCode === 503 && attempt < 300) return retry();
  if (created.statusCode !== 200) throw new Error(`POST /v2/search: ${created.statusCode} ${text}`);
  const record = JSON.parse(text) as { endpoint: string; token: string };
  return { base: record.endpoint, token: record.token };
}

/** A deterministic vocabulary with a Zipf-like use: a few common words, a long tail of rare ones. */
function vocabulary(size: number): string[] {
  const syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fe", "gu", "hi", "ja", "ko"];
  const words: string[] = [];
  for (let i = 0; words.length < size; i++) {
    let n = i;
    let w = "";
    do {
      w += syllables[n % syllables.length];
      n = Math.floor(n / syllables.length);
    } while (n > 0);
    if (w.length >= 4) words.push(w);
  }
  return words;
}

/** xorshift32: the same corpus and queries in every run. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

const VOCAB = vocabulary(20_000);
const zipf = (r: () => number) => VOCAB[Math.min(VOCAB.length - 1, Math.floor(VOCAB.length ** r()) - 1)]!;

export function document(n: number): { id: string; content: { title: string; body: string }; metadata: { n: number } } {
  const r = rng(n + 1);
  const words = (count: number) => Array.from({ length: count }, () => zipf(r)).join(" ");
  return { id: `doc-${n}`, content: { title: words(6), body: words(150) }, metadata: { n } };
}

/** Two words of the middle of the distribution: neither stop-word-like nor absent. */
export function queries(count: number): string[] {
  const r = rng(424_242);
  return Array.from({ length: count }, () => {
    const pick = () => VOCAB[50 + Math.floor(r() * 2000)]!;
    return `${pick()} ${pick()}`;
  });
}

export interface IndexHandle {
  base: string;
  token: string;
}

export async function post(index: IndexHandle, route: string, body: unknown, attempt = 1): Promise<unknown> {
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(`${index.base}/${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${index.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
  } catch (error) {
    // A keep-alive connection the server closed while the raw-store phase ran: every call here is idempotent.
    if (attempt < 3 && (error as { code?: string }).code === "UND_ERR_SOCKET") return post(index, route, body, attempt + 1);
    throw error;
  }
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${route}: ${res.statusCode} ${text}`);
  return (JSON.parse(text) as { result: unknown }).result;
}

/** Upserts documents [from, to) with WRITERS closed-loop writers; returns documents per second. */
export async function ingest(index: IndexHandle, from: number, to: number): Promise<number> {
  let next = from;
  const started = performance.now();
  const writer = async () => {
    for (;;) {
      const start = next;
      if (start >= to) return;
      next = Math.min(to, start + BATCH);
      const docs = Array.from({ length: next - start }, (_, i) => document(start + i));
      await post(index, "upsert-data/bench", docs);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  return (to - from) / ((performance.now() - started) / 1000);
}

/** The raw store: the same rows into a fresh SQLite file with Ferry's search tables, 100 per durable commit. */
function rawInsertRate(ctx: BenchContext, count: number): number {
  const db = new Database(join(ctx.workDir, `search-raw-${count}.db`));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec(`
    CREATE TABLE docs (rowid INTEGER PRIMARY KEY, ns TEXT NOT NULL, id TEXT NOT NULL, content TEXT NOT NULL,
      metadata TEXT, text TEXT NOT NULL, UNIQUE (ns, id));
    CREATE TABLE vecs (rowid INTEGER PRIMARY KEY, ns TEXT NOT NULL, embedding BLOB NOT NULL);
    CREATE VIRTUAL TABLE fts USING fts5 (text, content = 'docs', content_rowid = 'rowid', tokenize = 'porter unicode61 remove_diacritics 2');
    CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN INSERT INTO fts (rowid, text) VALUES (new.rowid, new.text); END;`);
  const insertDoc = db.prepare("INSERT INTO docs (ns, id, content, metadata, text) VALUES (?, ?, ?, ?, ?)");
  const insertVec = db.prepare("INSERT INTO vecs (rowid, ns, embedding) VALUES (?, ?, ?)");
  const vector = Buffer.alloc(256 * 4, 1);
  const docs = Array.from({ length: count }, (_, n) => document(n));
  const started = performance.now();
  for (let i = 0; i < count; i += BATCH) {
    db.transaction(() => {
      for (const d of docs.slice(i, i + BATCH)) {
        const text = `${d.content.title}\n${d.content.body}`;
        const rowid = insertDoc.run("bench", d.id, JSON.stringify(d.content), JSON.stringify(d.metadata), text)
          .lastInsertRowid;
        insertVec.run(rowid, "bench", vector);
      }
    })();
  }
  const rate = count / ((performance.now() - started) / 1000);
  db.close();
  return rate;
}

export async function queryLatencies(index: IndexHandle, qs: string[]): Promise<number[]> {
  const samples: number[] = [];
  for (const q of qs.slice(0, 20)) await post(index, "search/bench", { query: q, topK: 10 });
  for (const q of qs) {
    const t = performance.now();
    await post(index, "search/bench", { query: q, topK: 10, includeData: true, includeMetadata: true });
    samples.push(performance.now() - t);
  }
  return samples;
}

/** The same terms, OR'ed, straight on Ferry's FTS5 table (read-only connection to its file): the engine's ceiling. */
function ceilingLatencies(dbPath: string, qs: string[]): number[] {
  const db = new Database(dbPath, { readonly: true });
  const stmt = db.prepare(
    "SELECT rowid, bm25(search_documents_fts) AS s FROM search_documents_fts WHERE search_documents_fts MATCH ? ORDER BY rank LIMIT 10",
  );
  const match = (q: string) =>
    q
      .split(" ")
      .map((w) => `"${w}"`)
      .join(" OR ");
  for (const q of qs.slice(0, 20)) stmt.all(match(q));
  const samples = qs.map((q) => {
    const t = performance.now();
    stmt.all(match(q));
    return performance.now() - t;
  });
  db.close();
  return samples;
}

export const searchScenario: Scenario = {
  id: "search",
  title: "Search data plane (SQLite)",
  async run(ctx) {
    const sizes = [pick(ctx, 10_000, 1_000), pick(ctx, 100_000, 3_000)];
    const qs = queries(pick(ctx, 300, 50));
    const ferry = await startFerry({ workDir: ctx.workDir, name: "search", env: adminEnv });
    ctx.defer(() => ferry.stop());
    const index = await createIndex(ferry.origin);
    const dbPath = join(ferry.dataDir, "ferry.db");

    let have = 0;
    for (const size of sizes) {
      const cpuBefore = cpuSecondsOf(ferry.child.pid);
      const rate = await ingest(index, have, size);
      const cpu = cpuSecondsOf(ferry.child.pid) - cpuBefore;
      const ingested = size - have;
      have = size;
      const raw = rawInsertRate(ctx, size);
      const label = `${size / 1000}k`;
      ctx.log(`search: ${label} documents, ${formatNumber(rate)} upserts/s (raw store ${formatNumber(raw)}/s)`);
      ctx.record({
        key: `search.ingest${label}`,
        scenario: "Search",
        metric: `upserts/s up to ${label} documents (~1 KB, batches of ${BATCH}, ${WRITERS} writers)`,
        value: rate,
        unit: "docs/s",
        detail: `${ingested} documents; ${Math.round((cpu * 1e6) / ingested)} µs server CPU/doc; raw store ${formatNumber(raw)} docs/s; ${(rate / raw).toFixed(2)}× raw`,
      });
      ctx.record({
        key: `search.raw${label}`,
        scenario: "Search",
        metric: `raw store inserts/s (same rows straight into SQLite, FTS5, 100 per FULL commit)`,
        value: raw,
        unit: "docs/s",
      });
      const queryCpuBefore = cpuSecondsOf(ferry.child.pid);
      const lat = await queryLatencies(index, qs);
      // Server CPU per query (warm-up included: 20 more queries): what a query costs without the machine's load.
      const queryCpu = ((cpuSecondsOf(ferry.child.pid) - queryCpuBefore) * 1000) / (qs.length + 20);
      const ceiling = ceilingLatencies(dbPath, qs);
      for (const p of [50, 99] as const) {
        ctx.record({
          key: `search.p${p}at${label}`,
          scenario: "Search",
          metric: `hybrid query p${p} at ${label} documents (HTTP, topK 10, semanticWeight 0.75)`,
          value: percentile(lat, p),
          unit: "ms",
          detail: `${qs.length} queries, one at a time; FTS5 alone in process: p${p} ${formatNumber(percentile(ceiling, p))} ms; ${formatNumber(queryCpu)} ms server CPU/query (mean)`,
        });
        ctx.record({
          key: `search.ceilingP${p}at${label}`,
          scenario: "Search",
          metric: `FTS5 alone, p${p} at ${label} documents (ceiling, in process)`,
          value: percentile(ceiling, p),
          unit: "ms",
        });
      }
    }
  },
};
