import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { searchLimits } from "../../src/domain/search.js";
import { adminEnv, manage } from "../helpers/management.js";
import { httpCall, type HttpResult, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Plan limits of a free search index (seed 2.1, docs/search.md "Limits"), each a 4xx naming the limit, and the
 * counters behind them shown in the management API. The clock is pinned so per-second windows are deterministic.
 */

const free = searchLimits.free;
const clock = new ManualClock(Math.floor(Date.now() / 60_000) * 60_000 + 1_000);
let server: TestServer;
let index: { id: string; endpoint: string; token: string };

const call = (route: string, body: unknown): Promise<HttpResult> =>
  httpCall(index.endpoint, "POST", `/${route}`, {
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    token: index.token,
  });
const docs = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `d${from + i}`, content: { text: `document ${from + i}` } }));

function expectLimit(res: HttpResult, status: number, limit: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.json.status).toBe(status);
  expect(res.json.error).toContain(limit);
}

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv, clock });
  const created = await manage(server, "POST", "/v2/search", { body: { name: "f", region: "eu-west-1", type: "free" } });
  index = created.json;
});
afterAll(async () => server?.stop());

describe("search plan limits", () => {
  it("refuses more documents, results, ids or range entries per request than the plan allows (400)", async () => {
    expectLimit(await call("upsert-data/a", docs(0, free.max_writes_per_request + 1)), 400, "max_writes_per_request");
    expectLimit(await call("search/a", { query: "x", topK: free.max_reads_per_request + 1 }), 400, "max_reads_per_request");
    const ids = Array.from({ length: free.max_reads_per_request + 1 }, (_, i) => `d${i}`);
    expectLimit(await call("fetch/a", { ids }), 400, "max_reads_per_request");
    expectLimit(await call("range/a", { cursor: "", limit: free.max_reads_per_request + 1 }), 400, "max_reads_per_request");
    expectLimit(await call("delete/a", { ids: [...ids, ...ids] }), 400, "max_writes_per_request");
  });

  it("refuses a document too large, naming its id, and a bad index name", async () => {
    const big = await call("upsert-data/a", [{ id: "huge", content: { text: "x".repeat(9000) } }]);
    expect(big.status).toBe(400);
    expect(big.json.error).toMatch(/document "huge".*limit is 8192/);
    const badName = await call("upsert-data/a%20b", docs(0, 1));
    expect(badName.status).toBe(400);
    expect(badName.json.error).toMatch(/^invalid index name/);
  });

  it("refuses reranking beyond max_monthly_reranks (0 on the free plan)", async () => {
    expectLimit(await call("search/a", { query: "x", reranking: true }), 429, "max_monthly_reranks");
  });

  it("limits writes per second, then documents per day, then documents per index", async () => {
    // 10 × 100 documents fill this second's max_writes_per_second (1,000 on free).
    for (let i = 0; i < 10; i++) expect((await call("upsert-data/a", docs(i * 100, 100))).status).toBe(200);
    const tooFast = await call("upsert-data/a", docs(1000, 1));
    expectLimit(tooFast, 429, "max_writes_per_second");
    expect(tooFast.headers["retry-after"]).toBe("1");
    // The rest of the day's 10,000 updates, one second per 1,000.
    for (let i = 10; i < 100; i++) {
      if (i % 10 === 0) clock.advance(1000);
      expect((await call("upsert-data/a", docs(i * 100, 100))).status).toBe(200);
    }
    clock.advance(1000);
    expectLimit(await call("upsert-data/a", docs(10_000, 1)), 429, "max_daily_updates");
    clock.advance(86_400_000);
    // A new day: the index is full (max_vector_count 10,000), but replacing a document adds none.
    expectLimit(await call("upsert-data/a", docs(10_000, 1)), 400, "max_vector_count");
    expect((await call("upsert-data/a", docs(5, 1))).status).toBe(200);
    expect((await call("info", [])).json.result.vectorCount).toBe(free.max_vector_count);
  }, 120_000);

  it("limits queries per second", async () => {
    clock.advance(1000);
    for (let i = 0; i < free.max_query_per_second; i++) {
      const res = await call("fetch/a", { ids: ["d1"] });
      if (res.status !== 200) throw new Error(`query ${i}: ${res.text}`);
    }
    expectLimit(await call("search/a", { query: "document" }), 429, "max_query_per_second");
    clock.advance(1000);
    expect((await call("search/a", { query: "document 7", topK: 1 })).json.result[0].id).toBe("d7");
  }, 120_000);

  it("shows real counts in throughput_vector and the index stats", async () => {
    const record = await manage(server, "GET", `/v2/search/${index.id}`);
    const total = (record.json.throughput_vector as { y: number }[]).reduce((s, p) => s + p.y, 0);
    // Today's counters only: the 10,000 writes of yesterday are more than an hour ago.
    expect(total).toBe(1 + free.max_query_per_second + 1);
    const stats = await manage(server, "GET", `/v2/search/${index.id}/stats?period=7d`);
    expect(stats.status).toBe(200);
    expect(stats.json).toMatchObject({
      vector_count: free.max_vector_count,
      namespaces: { a: free.max_vector_count },
      embedder: "ferry-hash-v1",
      dimension: 128,
      daily_updates: 1,
      daily_queries: free.max_query_per_second + 1,
      monthly_reranks: 0,
    });
    // Request and response bodies of the month, every route included: at least the 10,000 documents sent.
    expect(stats.json.monthly_bandwidth).toBeGreaterThan(10_000 * 30);
    const week = (stats.json.throughput as { y: number }[]).reduce((s, p) => s + p.y, 0);
    expect(week).toBe(total + 10_000);
    expect((await manage(server, "GET", `/v2/search/${index.id}/stats?period=2h`)).status).toBe(400);
  });
});
