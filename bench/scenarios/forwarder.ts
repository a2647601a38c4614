import { join } from "node:path";
import { deliveryRun } from "../lib/delivery-run.js";
import { makeBody } from "../lib/generator.js";
import { CpuMeter, freePort, startNodeChild, waitForHttp } from "../lib/proc.js";
import { BenchReceiver } from "../lib/receiver.js";
import { type BenchContext, pick, rounds, type Scenario } from "../lib/scenario.js";
import { cpuPerMessage, medianOf, microsPerMessage } from "../lib/stats.js";
import { cannon } from "../lib/cannon.js";
import { CANNON_CONNECTIONS } from "./fastify.js";

/** Publishers, messages and bounds shared by every end-to-end run (forwarder, P1, peers) so they compare. */
export function endToEndLoad(ctx: BenchContext) {
  return {
    concurrency: 32,
    total: pick(ctx, 20_000, 1_000),
    /**
     * Messages sent before the measured rounds, the same for every system measured with this load: JIT, keep-alive
     * connections, and the storage's working size (Ferry's WAL, Redis's append-only file, PostgreSQL's buffers).
     * 500 left the first measured round of Ferry and of BullMQ alike 20–30% below the next two.
     */
    warmUp: pick(ctx, 5_000, 200),
    maxMs: pick(ctx, 60_000, 15_000),
    drainMs: pick(ctx, 60_000, 15_000),
    body: makeBody(1024),
  };
}

/**
 * Starts one of the ceiling apps (bench/apps/) and measures it under P1's generator, receiver and load: delivered
 * msg/s, median of the rounds. The app stops with the scenario, or when the caller stops the returned child.
 */
export async function ceilingDelivered(
  ctx: BenchContext,
  receiver: BenchReceiver,
  app: { name: string; file: string; env?: Record<string, string> },
) {
  const port = await freePort();
  const child = startNodeChild(app.name, app.file, {
    env: { BENCH_PORT: String(port), ...app.env },
    logPath: join(ctx.workDir, `${app.name}.log`),
  });
  ctx.defer(() => child.stop());
  const origin = `http://127.0.0.1:${port}`;
  await waitForHttp(`${origin}/health`, child);
  const load = endToEndLoad(ctx);
  const make = () => ({
    path: `/v2/publish/${receiver.url("/forwarded")}`,
    headers: { "content-type": "application/octet-stream" },
    body: load.body,
  });
  // Warm-up: JIT and keep-alive connections on both hops.
  await deliveryRun({ origin, receiver, serverPids: [child.pid], ...load, total: load.warmUp, make });
  const delivered = await medianOf(
    rounds(ctx),
    () => deliveryRun({ origin, receiver, serverPids: [child.pid], ...load, make }),
    (x) => x.deliveredPerSec,
  );
  return { child, origin, load, delivered };
}

/**
 * Ceiling 2: the bare in-memory forwarder (bench/apps/forwarder.ts) under the same generator, receiver and load
 * as P1: delivered msg/s.
 */
export const forwarderScenario: Scenario = {
  id: "forwarder",
  title: "Ceiling: bare in-memory forwarder",
  async run(ctx) {
    const receiver = await BenchReceiver.start();
    ctx.defer(() => receiver.close());
    const { child, origin, load, delivered } = await ceilingDelivered(ctx, receiver, {
      name: "forwarder",
      file: "bench/apps/forwarder.ts",
    });
    const r = delivered.median;
    ctx.record({
      key: "forwarder.delivered",
      scenario: "Ceiling",
      metric: "bare forwarder, delivered",
      value: r.deliveredPerSec,
      unit: "msg/s",
      detail: `${r.detail}; ${delivered.spread}`,
    });
    ctx.record({
      key: "forwarder.cores",
      scenario: "Ceiling",
      metric: "bare forwarder, cores kept busy (server, generator, receiver)",
      value: (r.serverCpu + r.benchCpu + r.receiverCpu) / r.seconds,
      unit: "cores",
      detail: "of 2: how busy a run that only forwards keeps this machine (read by the durable forwarder's bound)",
    });

    // The same forwarder under P2's generator (autocannon POSTs, acknowledgements/s): what an ingest path that
    // stores nothing reaches, for reading P2's ratio to raw Fastify.
    const seconds = pick(ctx, 5, 2);
    const acks = await medianOf(
      rounds(ctx),
      async () => {
        await receiver.reset();
        const cpu = new CpuMeter([child.pid]);
        const receiverCpu = new CpuMeter([receiver.pid]);
        const shot = await cannon({
          url: `${origin}/v2/publish/${receiver.url("/forwarded")}`,
          connections: CANNON_CONNECTIONS,
          seconds,
          maxRequests: 2_000_000,
          method: "POST",
          headers: { "content-type": "application/octet-stream" },
          body: load.body,
        });
        const used = cpu.read();
        await receiver.waitFor(shot.ok, 30_000); // its in-memory backlog drains before the next round
        const others = `generator ${microsPerMessage(used.bench, shot.ok)} µs/msg, receiver ${microsPerMessage(receiverCpu.read().servers, receiver.count)} µs/msg`;
        return { ...shot, cpuSeconds: used.servers, others };
      },
      (x) => x.rps,
    );
    ctx.record({
      key: "forwarder.acks",
      scenario: "Ceiling",
      metric: "bare forwarder, acknowledgements (as P2)",
      value: acks.median.rps,
      unit: "acks/s",
      detail: `autocannon ${CANNON_CONNECTIONS} conns, ${seconds} s, ${acks.median.ok} acks; ${cpuPerMessage(acks.median.cpuSeconds, acks.median.ok)}; ${acks.median.others}; ${acks.spread}`,
    });
  },
};
