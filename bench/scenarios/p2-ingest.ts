import { cannon } from "../lib/cannon.js";
import { BENCH_TOKEN, startFerry } from "../lib/ferry.js";
import { makeBody } from "../lib/generator.js";
import { CpuMeter, memoryOf } from "../lib/proc.js";
import { BenchReceiver } from "../lib/receiver.js";
import { type BenchContext, pick, rounds, type Scenario } from "../lib/scenario.js";
import { cpuPerMessage, medianOf } from "../lib/stats.js";
import { CANNON_CONNECTIONS } from "./fastify.js";

/**
 * Durable publish acknowledgements per second against one Ferry child, with autocannon (the same generator and
 * connections as the raw Fastify ceiling): POST /v2/publish/<receiver URL> with a 1 KiB body. Every answer counted
 * is a 200 sent after the SQLite commit; the deliveries run meanwhile, as they would in production.
 * Shared by P2 and P4.
 */
export async function ingestRun(
  ctx: BenchContext,
  opts: { name: string; dataDir?: string; seconds: number },
): Promise<{ rps: number; detail: string; peakMiB: number | undefined; delivered: number }> {
  const receiver = await BenchReceiver.start();
  const ferry = await startFerry({ workDir: ctx.workDir, name: opts.name, dataDir: opts.dataDir });
  try {
    const shot = (seconds: number) =>
      cannon({
        url: `${ferry.origin}/v2/publish/${receiver.url(`/${opts.name}`)}`,
        connections: CANNON_CONNECTIONS,
        seconds,
        maxRequests: 2_000_000,
        method: "POST",
        headers: { authorization: `Bearer ${BENCH_TOKEN}`, "content-type": "application/octet-stream" },
        body: makeBody(1024),
      });
    const warm = await shot(1); // warm-up
    await receiver.waitFor(warm.ok, 30_000);
    const { median: r, spread } = await medianOf(
      rounds(ctx),
      async () => {
        receiver.reset();
        const cpu = new CpuMeter([ferry.child.pid]);
        const shotResult = await shot(opts.seconds);
        const cpuSeconds = cpu.read().servers;
        // Let the deliveries catch up (bounded) so the next round does not compete with this backlog.
        await receiver.waitFor(shotResult.ok, 30_000);
        return { ...shotResult, cpuSeconds, delivered: receiver.count };
      },
      (x) => x.rps,
    );
    const peakMiB = memoryOf(ferry.child.pid)?.peakMiB;
    const bad = r.non2xx + r.errors;
    const detail = [
      `autocannon ${CANNON_CONNECTIONS} conns, ${opts.seconds} s, ${r.ok} acks${bad > 0 ? `, ${bad} BAD` : ""}`,
      `ack latency p50 ${r.latencyP50} ms / p99 ${r.latencyP99} ms`,
      cpuPerMessage(r.cpuSeconds, r.ok),
      `${r.delivered} delivered during or after`,
      spread,
    ].join("; ");
    return { rps: r.rps, detail, peakMiB, delivered: r.delivered };
  } finally {
    await ferry.stop();
    await receiver.close();
  }
}

export const p2Scenario: Scenario = {
  id: "p2",
  title: "P2 durable ingest",
  needs: ["fastify"],
  async run(ctx) {
    const r = await ingestRun(ctx, { name: "p2", seconds: pick(ctx, 5, 2) });
    ctx.record({
      key: "p2.acks",
      scenario: "P2 ingest",
      metric: "durable publish acknowledgements",
      value: r.rps,
      unit: "acks/s",
      detail: r.detail,
    });
  },
};
