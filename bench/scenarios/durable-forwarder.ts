import { join } from "node:path";
import { getFerryRoot } from "../lib/ferry.js";
import { BenchReceiver } from "../lib/receiver.js";
import type { BenchContext, Scenario } from "../lib/scenario.js";
import { ceilingDelivered } from "./forwarder.js";

/** What the durable forwarder writes per message (bench/apps/durable-forwarder.ts, BENCH_ROWS). */
const variants = [
  { rows: "ferry", key: "durable", what: "Ferry's rows" },
  { rows: "message", key: "durableBare", what: "the message row only, no log entries" },
] as const;

/**
 * Ceiling 3: the durable forwarder (bench/apps/durable-forwarder.ts): the bare forwarder plus, for each message, a
 * group-committed, fsynced write of Ferry's rows and a signature, and nothing else; then the same with the message
 * row alone, the least any durable at-least-once forwarder writes. Each gets a bound: what a design doing exactly
 * that work could deliver if it spread it over both cores as well as the bare forwarder keeps them busy. P1's ratio
 * to the first figure is how much of what its rows allow Ferry reaches (docs/threading.md).
 */
export const durableForwarderScenario: Scenario = {
  id: "durable",
  title: "Ceiling: durable forwarder (rows, fsync and signature, nothing else)",
  needs: ["forwarder"],
  async run(ctx) {
    const receiver = await BenchReceiver.start();
    ctx.defer(() => receiver.close());
    for (const v of variants) await measureVariant(ctx, receiver, v);
  },
};

async function measureVariant(ctx: BenchContext, receiver: BenchReceiver, v: (typeof variants)[number]) {
  const root = getFerryRoot();
  const { child, delivered } = await ceilingDelivered(ctx, receiver, {
    name: `durable-forwarder-${v.rows}`,
    file: "bench/apps/durable-forwarder.ts",
    env: {
      BENCH_DB: join(ctx.workDir, `durable-forwarder-${v.rows}.sqlite`),
      BENCH_ROWS: v.rows,
      ...(root ? { BENCH_FERRY_ROOT: root } : {}),
    },
  });
  await child.stop();
  const r = delivered.median;
  ctx.record({
    key: `${v.key}.delivered`,
    scenario: "Ceiling",
    metric: `durable forwarder (${v.what}; fsync, signature), delivered`,
    value: r.deliveredPerSec,
    unit: "msg/s",
    detail: `${r.detail}; ${delivered.spread}`,
  });
  // The app runs on one thread. A design that spread the same work over both cores is bounded by the CPU it needs
  // per message, the generator's and the receiver's included, against the cores the forwarder's run kept busy.
  const cores = ctx.value("forwarder.cores");
  if (cores === undefined || r.delivered === 0) return;
  const cpuPerMessage = (r.serverCpu + r.benchCpu + r.receiverCpu) / r.delivered;
  ctx.record({
    key: `${v.key}.bound`,
    scenario: "Ceiling",
    metric: `most any design doing that work delivers (${v.what}; both cores)`,
    value: cores / cpuPerMessage,
    unit: "msg/s",
    detail: `${Math.round(cpuPerMessage * 1e6)} µs of CPU per message in all (server, generator, receiver), at the ${cores.toFixed(2)} cores the forwarder's run kept busy`,
  });
}
