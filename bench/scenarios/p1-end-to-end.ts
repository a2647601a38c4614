import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { findProfile, profileMarkdown, summarizeProfile } from "../lib/cpuprofile.js";
import { deliveryRun } from "../lib/delivery-run.js";
import { type FerryProcess, publishRequest, startFerry } from "../lib/ferry.js";
import { BenchReceiver } from "../lib/receiver.js";
import { type BenchContext, rounds, type Scenario } from "../lib/scenario.js";
import { medianOf } from "../lib/stats.js";
import { endToEndLoad } from "./forwarder.js";

async function measure(ctx: BenchContext, ferry: FerryProcess, receiver: BenchReceiver, n: number) {
  const load = endToEndLoad(ctx);
  const destination = receiver.url("/p1");
  const make = () => publishRequest(destination, load.body);
  const origin = ferry.origin;
  await deliveryRun({ origin, receiver, serverPids: [ferry.child.pid], ...load, total: 500, make });
  return medianOf(
    n,
    () => deliveryRun({ origin, receiver, serverPids: [ferry.child.pid], ...load, make }),
    (r) => r.deliveredPerSec,
  );
}

/**
 * P1: publish over HTTP (1 KiB bodies, 32 publishers) → durable (SQLite, synchronous=FULL) → signed delivery to
 * the receiver → outcome and log written. Same load as the forwarder ceiling. With profiling on, a second Ferry
 * runs the same load under `node --cpu-prof` and the top self-time functions go to the results file.
 */
export const p1Scenario: Scenario = {
  id: "p1",
  title: "P1 end to end",
  needs: ["forwarder"],
  async run(ctx) {
    const receiver = await BenchReceiver.start();
    ctx.defer(() => receiver.close());
    const ferry = await startFerry({ workDir: ctx.workDir, name: "p1" });
    ctx.defer(() => ferry.stop());
    const { median: r, spread } = await measure(ctx, ferry, receiver, rounds(ctx));
    const unsigned = r.delivered - r.signed;
    ctx.record({
      key: "p1.delivered",
      scenario: "P1 end to end",
      metric: "Ferry publish → durable → signed delivery",
      value: r.deliveredPerSec,
      unit: "msg/s",
      detail: `${r.detail}${unsigned > 0 ? `; ${unsigned} arrived UNSIGNED` : ""}; ${spread}`,
    });
    await ferry.stop();

    if (!ctx.profile) return;
    const profDir = join(ctx.workDir, "p1-profile");
    mkdirSync(profDir, { recursive: true });
    const profiled = await startFerry({
      workDir: ctx.workDir,
      name: "p1-prof",
      nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profDir}`],
    });
    ctx.defer(() => profiled.stop());
    const { median: pr } = await measure(ctx, profiled, receiver, 1);
    await profiled.stop(); // the profile is written when the process exits
    const file = findProfile(profDir);
    if (!file) {
      ctx.section("P1 CPU profile", "No profile was written (the Ferry child did not exit cleanly).");
      return;
    }
    ctx.section(
      "P1 CPU profile (Ferry child under `node --cpu-prof`, same load)",
      `Profiled run: ${pr.deliveredPerSec.toFixed(0)} msg/s delivered (${pr.detail}); profiling slows it down.\n\n${profileMarkdown(summarizeProfile(file, 25))}`,
    );
  },
};
