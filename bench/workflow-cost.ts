/**
 * `node --import tsx bench/workflow-cost.ts [--runs=N] [--steps=S] [--concurrency=C] [--warmup=W] [--compiled]
 *   [--cpu-prof=<dir>] [--ferry-root=<checkout>] [--origin=<url> --pid=<pid>] [--rate=<runs/s> --seconds=<s>]`
 *
 * What one workflow step costs (issue 25's speed section; bench/README.md "workflow"): starts a Ferry on a fresh
 * SQLite file in the upstash dialect (from source, or `--compiled` as `npm start` runs it; `--cpu-prof` writes its
 * profiles to a directory), runs W warm-up runs and then N runs of S steps with the official SDK, C in flight, and
 * prints Ferry's CPU per step and the SDK app's (this process). CPU per step depends far less on how busy the machine
 * is than steps/s, so it is what to compare while other work runs. With `--origin` and `--pid` it drives a Ferry
 * started elsewhere (under valgrind, for instance) instead, whose dialect must be upstash and token the bench's;
 * `--ferry-root` runs another checkout's Ferry (the one before a change, for instance) with this harness. `--rate`
 * starts runs at that fixed rate for `--seconds` instead (open loop, the scenario's latency load) and prints the step
 * latency.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFerryRoot, startFerry } from "./lib/ferry.js";
import { WorkflowBenchApp } from "./lib/workflow-app.js";
import { latencySummary, paced, saturatedRuns } from "./lib/workflow-load.js";

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, "").split("=", 2);
    return [k!, v ?? "true"] as const;
  }),
);
const num = (name: string, fallback: number) => Number(args.get(name) ?? fallback);

const runs = num("runs", 300);
const steps = num("steps", 3);
const concurrency = num("concurrency", 50);
const warmup = num("warmup", 50);

setFerryRoot(args.get("ferry-root"));
const workDir = mkdtempSync(join(tmpdir(), "ferry-wf-cost-"));
let origin = args.get("origin");
let pid = args.has("pid") ? Number(args.get("pid")) : undefined;
let stop: (() => Promise<unknown>) | undefined;
if (origin === undefined || pid === undefined) {
  const prof = args.get("cpu-prof");
  const ferry = await startFerry({
    workDir,
    name: "workflow-cost",
    env: { FERRY_DIALECT: "upstash" },
    compiled: args.has("compiled"),
    ...(prof ? { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${prof}`] } : {}),
  });
  origin = ferry.origin;
  pid = ferry.child.pid;
  stop = () => ferry.stop();
}
const app = await WorkflowBenchApp.start();
try {
  const phase = { app, origin, ferryPid: pid, steps, maxMs: 300_000 };
  if (warmup > 0) await saturatedRuns({ ...phase, runs: warmup, concurrency: Math.min(concurrency, warmup) });
  const rate = args.has("rate") ? Number(args.get("rate")) : undefined;
  const r =
    rate === undefined
      ? await saturatedRuns({ ...phase, runs, concurrency })
      : await paced({ ...phase, ratePerSec: rate, durationMs: num("seconds", 10) * 1000 });
  const { p50, p99 } = latencySummary(r.latencies);
  console.log(
    [
      `${r.finished}/${r.runs} runs of ${steps} steps, ${r.steps} steps in ${r.seconds.toFixed(1)} s`,
      `${r.stepsPerSec.toFixed(0)} steps/s`,
      `Ferry ${r.ferryUsPerStep.toFixed(0)} µs CPU/step`,
      `app ${r.appUsPerStep.toFixed(0)} µs CPU/step`,
      `latency p50 ${p50?.toFixed(1)} ms, p99 ${p99?.toFixed(1)} ms ${rate === undefined ? "(saturated: queueing)" : `(open loop, ${rate} runs/s)`}`,
    ].join("; "),
  );
} finally {
  await app.close();
  await stop?.();
  rmSync(workDir, { recursive: true, force: true });
}
