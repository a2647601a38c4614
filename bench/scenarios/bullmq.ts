import { peerRun } from "../lib/peer-run.js";
import { resolvePeerPackages } from "../lib/peer-deps.js";
import type { Scenario } from "../lib/scenario.js";
import { startRedis } from "../lib/services.js";

/** Peer 1: BullMQ on Redis (bench/apps/bullmq-app.ts), durable as Redis's docs recommend (AOF, fsync every second). */
export const bullmqScenario: Scenario = {
  id: "bullmq",
  title: "Peer: BullMQ on Redis",
  needs: ["p1"],
  async run(ctx) {
    // Pinned: bullmq 6.7.0 (the version the project chose) and its Redis client, ioredis 5.11.1.
    const deps = await resolvePeerPackages({ bullmq: "6.7.0", ioredis: "5.11.1" }, ctx.log);
    const redis = await startRedis(ctx.workDir, ctx.log);
    ctx.defer(() => redis.stop());
    await peerRun(ctx, {
      key: "bullmq",
      label: "BullMQ 6 on Redis 7, delivered",
      app: "bench/apps/bullmq-app.ts",
      env: { REDIS_PORT: String(redis.port), BENCH_BULLMQ: deps.bullmq!, BENCH_IOREDIS: deps.ioredis! },
      databasePids: () => [redis.child.pid],
      settings: `worker concurrency 100; Redis ${redis.settings}`,
    });
  },
};
