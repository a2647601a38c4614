import { peerRun } from "../lib/peer-run.js";
import { resolvePeerPackage } from "../lib/peer-deps.js";
import type { Scenario } from "../lib/scenario.js";
import { startRedis } from "../lib/services.js";

/** Peer 1: BullMQ on Redis (bench/apps/bullmq-app.ts), durable as Redis's docs recommend (AOF, fsync every second). */
export const bullmqScenario: Scenario = {
  id: "bullmq",
  title: "Peer: BullMQ on Redis",
  needs: ["p1"],
  async run(ctx) {
    const ioredis = await resolvePeerPackage("ioredis", "5.11.1", ctx.log);
    const redis = await startRedis(ctx.workDir, ctx.log);
    ctx.defer(() => redis.stop());
    await peerRun(ctx, {
      key: "bullmq",
      label: "BullMQ 6 on Redis 7, delivered",
      app: "bench/apps/bullmq-app.ts",
      env: { REDIS_PORT: String(redis.port), BENCH_IOREDIS: ioredis },
      databasePids: () => [redis.child.pid],
      settings: `worker concurrency 100; Redis ${redis.settings}`,
    });
  },
};
