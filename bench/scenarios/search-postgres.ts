import pg from "pg";
import { startFerry } from "../lib/ferry.js";
import { cpuSecondsOf } from "../lib/proc.js";
import { pick, type Scenario } from "../lib/scenario.js";
import { startPostgres } from "../lib/services.js";
import { formatNumber, percentile } from "../lib/stats.js";
import { adminEnv, BATCH, createIndex, ingest, queries, queryLatencies, WRITERS } from "./search.js";

/**
 * The search data plane on PostgreSQL (docs/search.md "Storage"), at 10,000 documents: upserts/s and hybrid query
 * p50/p99 through the endpoint, against the same words run directly on PostgreSQL's full-text engine (tsvector,
 * GIN, ts_rank, top 10) from this process. No goal: the semantic side is an exact scan in Ferry's process.
 */
export const searchPgScenario: Scenario = {
  id: "searchpg",
  title: "Search data plane (PostgreSQL)",
  async run(ctx) {
    const size = pick(ctx, 10_000, 1_000);
    const qs = queries(pick(ctx, 300, 50));
    const server = await startPostgres(ctx.workDir, ctx.log);
    ctx.defer(() => server.stop());
    const ferry = await startFerry({ workDir: ctx.workDir, name: "searchpg", env: { ...adminEnv, DATABASE_URL: server.url } });
    ctx.defer(() => ferry.stop());
    const index = await createIndex(ferry.origin);
    const cpuBefore = cpuSecondsOf(ferry.child.pid);
    const rate = await ingest(index, 0, size);
    const cpu = cpuSecondsOf(ferry.child.pid) - cpuBefore;
    ctx.record({
      key: "searchpg.ingest",
      scenario: "Search (PostgreSQL)",
      metric: `upserts/s up to ${size / 1000}k documents (~1 KB, batches of ${BATCH}, ${WRITERS} writers)`,
      value: rate,
      unit: "docs/s",
      detail: `${Math.round((cpu * 1e6) / size)} µs Ferry CPU/doc (PostgreSQL's not included)`,
    });
    const queryCpuBefore = cpuSecondsOf(ferry.child.pid);
    const lat = await queryLatencies(index, qs);
    // Ferry's CPU per query (warm-up included); PostgreSQL's is not.
    const queryCpu = ((cpuSecondsOf(ferry.child.pid) - queryCpuBefore) * 1000) / (qs.length + 20);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    ctx.defer(() => client.end());
    const ceiling: number[] = [];
    for (const q of qs) {
      const t = performance.now();
      await client.query(
        `SELECT seq, ts_rank(tsv, query) AS r FROM search_documents, to_tsquery('english', $1) query
         WHERE tsv @@ query ORDER BY r DESC LIMIT 10`,
        [q.split(" ").join(" | ")],
      );
      ceiling.push(performance.now() - t);
    }
    for (const p of [50, 99] as const) {
      ctx.record({
        key: `searchpg.p${p}`,
        scenario: "Search (PostgreSQL)",
        metric: `hybrid query p${p} at ${size / 1000}k documents (HTTP, topK 10, semanticWeight 0.75)`,
        value: percentile(lat, p),
        unit: "ms",
        detail: `${qs.length} queries, one at a time; PostgreSQL full text alone: p${p} ${formatNumber(percentile(ceiling, p))} ms; ${formatNumber(queryCpu)} ms Ferry CPU/query (mean)`,
      });
    }
  },
};
