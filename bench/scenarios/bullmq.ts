import { peerRun } from "../lib/peer-run.js";
import { resolvePeerPackages } from "../lib/peer-deps.js";
import type { Scenario } from "../lib/scenario.js";
import { type RedisFsync, startRedis } from "../lib/services.js";

/** The measurement key of BullMQ under each Redis AOF policy (goals.ts reads P1 against both). */
export const BULLMQ_KEYS: Record<RedisFsync, string> = { everysec: "bullmq", always: "bullmqAlways" };

/**
 * Peer 1: BullMQ on Redis (bench/apps/bullmq-app.ts), run twice, once under each of Redis's AOF fsync policies
 * (issue 29, "fairer peers"): `appendfsync everysec`, Redis's recommended setting (up to a second of acknowledged jobs
 * lost on a crash), and `appendfsync always` (a job is on disk before `queue.add` answers: Ferry's durability).
 */
export const bullmqScenario: Scenario = {
  id: "bullmq",
  title: "Peer: BullMQ on Redis",
  needs: ["p1"],
  async run(ctx) {
    // Pinned: bullmq 6.7.0 (the version the project chose) and its Redis client, ioredis 5.11.1.
    const deps = await resolvePeerPackages({ bullmq: "6.7.0", ioredis: "5.11.1" }, ctx.log);
    for (const policy of ["everysec", "always"] as const) {
      const redis = await startRedis(ctx.workDir, ctx.log, policy);
      try {
        await peerRun(ctx, {
          key: BULLMQ_KEYS[policy],
          label: `BullMQ 6 on Redis 7, appendfsync ${policy}, delivered`,
          app: "bench/apps/bullmq-app.ts",
          env: { REDIS_PORT: String(redis.port), BENCH_BULLMQ: deps.bullmq!, BENCH_IOREDIS: deps.ioredis! },
          databasePids: () => [redis.child.pid],
          settings: `worker concurrency 100; Redis ${redis.settings}`,
        });
      } finally {
        await redis.stop();
      }
    }
  },
};
