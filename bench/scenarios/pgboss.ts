import { peerRun } from "../lib/peer-run.js";
import type { Scenario } from "../lib/scenario.js";
import { childrenOf, startPostgres } from "../lib/services.js";

/** Peer 2: pg-boss 10 on PostgreSQL 15 (bench/apps/pgboss-app.ts), with PostgreSQL's durable defaults. */
export const pgbossScenario: Scenario = {
  id: "pgboss",
  title: "Peer: pg-boss on PostgreSQL",
  needs: ["p1"],
  async run(ctx) {
    const pg = await startPostgres(ctx.workDir, ctx.log);
    ctx.defer(() => pg.stop());
    const postmaster = pg.pid();
    await peerRun(ctx, {
      key: "pgboss",
      label: "pg-boss 10 on PostgreSQL 15, delivered",
      app: "bench/apps/pgboss-app.ts",
      env: { DATABASE_URL: pg.url },
      databasePids: () => [postmaster, ...childrenOf(postmaster)],
      settings: `4 workers × batch 100, polling 0.5 s (pg-boss's minimum); ${pg.settings}`,
    });
  },
};
