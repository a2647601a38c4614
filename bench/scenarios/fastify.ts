import { join } from "node:path";
import { cannon } from "../lib/cannon.js";
import { CpuMeter, freePort, startNodeChild, waitForHttp } from "../lib/proc.js";
import { pick, rounds, type Scenario } from "../lib/scenario.js";
import { cpuPerMessage, medianOf } from "../lib/stats.js";

/** Connections for every autocannon run (ceiling and P2 ingest), as in dependencies.md's wrk figures. */
export const CANNON_CONNECTIONS = 50;

/** Ceiling 1: raw Fastify hello world (GET, child process), autocannon with 50 connections. */
export const fastifyScenario: Scenario = {
  id: "fastify",
  title: "Ceiling: raw Fastify hello world",
  async run(ctx) {
    const port = await freePort();
    const child = startNodeChild("fastify-hello", "bench/apps/fastify-hello.ts", {
      env: { BENCH_PORT: String(port) },
      logPath: join(ctx.workDir, "fastify-hello.log"),
    });
    ctx.defer(() => child.stop());
    const url = `http://127.0.0.1:${port}/`;
    await waitForHttp(url, child);
    // Warm-up, so JIT and connection setup are not measured.
    await cannon({ url, connections: CANNON_CONNECTIONS, seconds: 1, maxRequests: 100_000 });
    const seconds = pick(ctx, 5, 2);
    const { median, spread } = await medianOf(
      rounds(ctx),
      async () => {
        const cpu = new CpuMeter([child.pid]);
        const r = await cannon({ url, connections: CANNON_CONNECTIONS, seconds, maxRequests: 2_000_000 });
        return { ...r, cpu: cpu.read().servers };
      },
      (r) => r.rps,
    );
    const r = median;
    ctx.record({
      key: "fastify.rps",
      scenario: "Ceiling",
      metric: "raw Fastify hello world",
      value: r.rps,
      unit: "req/s",
      detail: `autocannon ${CANNON_CONNECTIONS} conns, ${seconds} s, ${r.ok} ok, ${r.non2xx + r.errors} bad; ${cpuPerMessage(r.cpu, r.ok)}; ${spread}`,
    });
  },
};
