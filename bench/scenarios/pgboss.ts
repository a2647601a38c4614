import { peerRun } from "../lib/peer-run.js";
import type { Scenario } from "../lib/scenario.js";
import { childrenOf, startPostgres } from "../lib/services.js";

/** Peer 2: pg-boss 10 on PostgreSQL 15 (bench/apps/pgboss-app.ts), with PostgreSQL's durable defaults. */
export const pgbossScenario: Scenario = {
  id: "pgboss",
  title: "Peer: pg-boss on PostgreSQL",
  needs: ["p1"],
  async run(ctx) {
    // A pg-boss worker fetches a batch, delivers it, then waits out its polling interval: workers × batch per
    // 0.5 s caps throughput, so the cap is set well above what this machine can deliver.
    const workers = Number(process.env.BENCH_PGBOSS_WORKERS ?? "4");
    const batch = Number(process.env.BENCH_PGBOSS_BATCH ?? "500");
    const pg = await startPostgres(ctx.workDir, ctx.log);
    ctx.defer(() => pg.stop());
    const postmaster = pg.pid();
    await peerRun(ctx, {
      key: "pgboss",
      label: "pg-boss 10 on PostgreSQL 15, delivered",
      app: "bench/apps/pgboss-app.ts",
      env: { DATABASE_URL: pg.url, BENCH_PGBOSS_WORKERS: String(workers), BENCH_PGBOSS_BATCH: String(batch) },
      databasePids: () => [postmaster, ...childrenOf(postmaster)],
      settings: `${workers} workers × batch ${batch}, polling 0.5 s (pg-boss's minimum), so at most ${(workers * batch) / 0.5}/s; ${pg.settings}`,
    });
  },
};
