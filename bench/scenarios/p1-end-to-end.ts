import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { busyShare, findProfile, otherThreadProfiles, profileMarkdown, summarizeProfile } from "../lib/cpuprofile.js";
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
  await deliveryRun({ origin, receiver, serverPids: [ferry.child.pid], ...load, total: load.warmUp, make });
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
  needs: ["forwarder", "durable"],
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

    // What the egress thread buys (docs/threading.md): the same load with deliveries sent from the main thread.
    const inline = await startFerry({ workDir: ctx.workDir, name: "p1-inline", env: { FERRY_EGRESS_THREAD: "off" } });
    ctx.defer(() => inline.stop());
    const { median: ri, spread: si } = await measure(ctx, inline, receiver, rounds(ctx));
    ctx.record({
      key: "p1.inline",
      scenario: "P1 end to end",
      metric: "same, sent from the main thread (FERRY_EGRESS_THREAD=off)",
      value: ri.deliveredPerSec,
      unit: "msg/s",
      detail: `${ri.detail}; ${si}`,
    });
    await inline.stop();

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
      "P1 CPU profile, main thread (Ferry child under `node --cpu-prof`, same load)",
      `Profiled run: ${pr.deliveredPerSec.toFixed(0)} msg/s delivered (${pr.detail}); profiling slows it down.\n\n${profileMarkdown(summarizeProfile(file, 25))}`,
    );
    // Other threads: the egress thread, and (from source) tsx's loader threads, which idle once modules are loaded.
    // The busiest one is the egress thread.
    const others = otherThreadProfiles(profDir).map((f) => summarizeProfile(f, 25));
    const egressThread = others.sort((a, b) => busyShare(b) - busyShare(a))[0];
    const main = summarizeProfile(file, 25);
    if (egressThread) {
      ctx.section(
        "P1 CPU profile, egress thread (same run)",
        `Busy ${(busyShare(egressThread) * 100).toFixed(0)}% of the time, the main thread ${(busyShare(main) * 100).toFixed(0)}%. ` +
          "On a loaded machine a thread's samples include time it waited for a core (a postMessage that wakes the other " +
          "thread, for instance, is often where the main thread loses its core), so busy shares overstate CPU; the " +
          "CPU per message in the table is what the process used.\n\n" +
          profileMarkdown(egressThread),
      );
    }
  },
};
