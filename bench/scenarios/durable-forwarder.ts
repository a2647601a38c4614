import { join } from "node:path";
import { getFerryRoot } from "../lib/ferry.js";
import { BenchReceiver } from "../lib/receiver.js";
import type { Scenario } from "../lib/scenario.js";
import { ceilingDelivered } from "./forwarder.js";

/**
 * Ceiling 3: the durable forwarder (bench/apps/durable-forwarder.ts): the bare forwarder plus Ferry's rows, group
 * commit, fsync and signature for each message, and nothing else. Its ratio to the bare forwarder bounds what any
 * design that writes Ferry's rows can reach against the P1 floor; P1's ratio to it is how much of that Ferry reaches.
 */
export const durableForwarderScenario: Scenario = {
  id: "durable",
  title: "Ceiling: durable forwarder (Ferry's rows and signature, nothing else)",
  needs: ["forwarder"],
  async run(ctx) {
    const receiver = await BenchReceiver.start();
    ctx.defer(() => receiver.close());
    const root = getFerryRoot();
    const { delivered } = await ceilingDelivered(ctx, receiver, {
      name: "durable-forwarder",
      file: "bench/apps/durable-forwarder.ts",
      env: { BENCH_DB: join(ctx.workDir, "durable-forwarder.sqlite"), ...(root ? { BENCH_FERRY_ROOT: root } : {}) },
    });
    const r = delivered.median;
    ctx.record({
      key: "durable.delivered",
      scenario: "Ceiling",
      metric: "durable forwarder (Ferry's rows, fsync, signature), delivered",
      value: r.deliveredPerSec,
      unit: "msg/s",
      detail: `${r.detail}; ${delivered.spread}`,
    });
  },
};
