import { describeRound, startIngestTarget } from "../lib/ingest.js";
import { pick, rounds, type Scenario } from "../lib/scenario.js";
import { medianOf } from "../lib/stats.js";

/** P2: durable publish acknowledgements/s (lib/ingest.ts), median of the rounds; ratio to raw Fastify. */
export const p2Scenario: Scenario = {
  id: "p2",
  title: "P2 durable ingest",
  needs: ["fastify", "forwarder"],
  async run(ctx) {
    const seconds = pick(ctx, 5, 2);
    const target = await startIngestTarget(ctx, { name: "p2" });
    const { median, spread } = await medianOf(
      rounds(ctx),
      () => target.round(seconds),
      (r) => r.rps,
    );
    const forwarderAcks = ctx.value("forwarder.acks");
    ctx.record({
      key: "p2.acks",
      scenario: "P2 ingest",
      metric: "durable publish acknowledgements",
      value: median.rps,
      unit: "acks/s",
      detail: `${describeRound(median, seconds)}; ${spread}${forwarderAcks ? `; ${(median.rps / forwarderAcks).toFixed(2)}× the bare forwarder's acks` : ""}`,
    });
  },
};
