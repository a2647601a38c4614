import { join } from "node:path";
import { findProfile, profileMarkdown, summarizeProfile } from "../lib/cpuprofile.js";
import { startFerry } from "../lib/ferry.js";
import { cpuSecondsOf } from "../lib/proc.js";
import { type BenchContext, pick, rounds, type Scenario } from "../lib/scenario.js";
import { medianOf } from "../lib/stats.js";
import { WorkflowBenchApp } from "../lib/workflow-app.js";
import { latencySummary, type PhaseResult, paced, saturatedRuns } from "../lib/workflow-load.js";

/**
 * Workflows (docs/workflows.md, issue 25's speed section; bench/README.md "workflow"): the official
 * `@upstash/workflow` SDK's `serve` in an app inside the bench process (lib/workflow-app.ts), driven by a Ferry in
 * the upstash dialect. Each step is one delivery to the app plus one step publish back.
 * - Throughput at saturation: 3-step runs, a fixed number in flight (closed loop), steps/s against P1's msg/s, and
 *   the CPU a step cost Ferry and the app (the app shares the machine's cores with Ferry).
 * - Latency at a fixed arrival rate well under capacity (open loop): runs started at `BENCH_WORKFLOW_RATE` runs/s,
 *   step published → the run's next call arriving, p50/p99. Measured apart from throughput: with thousands of runs
 *   started at once, a step's latency is its place in the queue.
 * - A 50-step run's late steps against its early ones: Ferry's CPU over the first fifth of all steps against the
 *   last fifth (the runs start together and advance at about the same pace, so these are about steps 1–10 and 41–50).
 */

const RUN_STEPS = 3;

function costDetail(r: PhaseResult): string {
  return `Ferry ${r.ferryUsPerStep.toFixed(0)} µs CPU/step, SDK app ${r.appUsPerStep.toFixed(0)} µs CPU/step`;
}

async function lateCpu(ctx: BenchContext, app: WorkflowBenchApp, origin: string, pid: number) {
  const runs = pick(ctx, 100, 10);
  const steps = 50;
  const total = runs * steps;
  const fifth = Math.floor(total / 5);
  const marks: number[] = [];
  app.onStep = () => {
    if (app.steps === 1 || app.steps === fifth || app.steps === total - fifth || app.steps === total) {
      marks.push(cpuSecondsOf(pid));
    }
  };
  const r = await saturatedRuns({ app, origin, ferryPid: pid, steps, maxMs: pick(ctx, 300_000, 60_000), runs, concurrency: runs });
  app.onStep = undefined;
  const early = marks.length === 4 ? (marks[1]! - marks[0]!) / fifth : undefined;
  const late = marks.length === 4 ? (marks[3]! - marks[2]!) / fifth : undefined;
  return { r, early, late };
}

export const workflowScenario: Scenario = {
  id: "workflow",
  title: "Workflow runs with the official SDK",
  needs: ["p1"],
  async run(ctx) {
    const ferry = await startFerry({ workDir: ctx.workDir, name: "workflow", env: { FERRY_DIALECT: "upstash" } });
    ctx.defer(() => ferry.stop());
    const app = await WorkflowBenchApp.start();
    ctx.defer(() => app.close());
    const pid = ferry.child.pid;
    const phase = { app, origin: ferry.origin, ferryPid: pid, steps: RUN_STEPS, maxMs: pick(ctx, 300_000, 60_000) };

    // Warm-up (JIT, connections), not measured.
    await saturatedRuns({ ...phase, runs: pick(ctx, 200, 20), concurrency: pick(ctx, 100, 20) });

    const runs = pick(ctx, 2000, 100);
    const concurrency = pick(ctx, 100, 20);
    const { median: sat, spread } = await medianOf(
      rounds(ctx),
      () => saturatedRuns({ ...phase, runs, concurrency }),
      (r) => r.stepsPerSec,
    );
    ctx.record({
      key: "workflow.steps3",
      scenario: "Workflows",
      metric: `${RUN_STEPS}-step runs at saturation, steps/s`,
      value: sat.stepsPerSec,
      unit: "steps/s",
      detail: `${sat.finished}/${sat.runs} runs, ${concurrency} in flight, in ${sat.seconds.toFixed(1)} s; ${costDetail(sat)}; ${spread}`,
    });
    ctx.record({
      key: "workflow.ferryCpu",
      scenario: "Workflows",
      metric: "Ferry CPU per step (saturated 3-step runs)",
      value: sat.ferryUsPerStep,
      unit: "µs/step",
      detail: "all of Ferry's threads; a step is one delivery with the history plus one step publish, and a 3-step run adds its trigger, a fourth delivery and its end",
    });
    ctx.record({
      key: "workflow.appCpu",
      scenario: "Workflows",
      metric: "SDK app CPU per step (same runs)",
      value: sat.appUsPerStep,
      unit: "µs/step",
      detail: "the bench process: the official SDK's serve (deliveries in, step publishes out) and the run triggers; it shares the cores with Ferry",
    });

    const rate = Number(process.env.BENCH_WORKFLOW_RATE ?? 50);
    const durationMs = pick(ctx, 10_000, 3_000);
    const lat = await paced({ ...phase, ratePerSec: rate, durationMs });
    const { p50, p99 } = latencySummary(lat.latencies);
    const latDetail = `open loop: ${rate} runs/s (${rate * RUN_STEPS} steps/s) for ${durationMs / 1000} s; ${lat.latencies.length} steps; ${lat.finished}/${lat.runs} runs finished; ${costDetail(lat)}`;
    ctx.record({ key: "workflow.p50", scenario: "Workflows", metric: "step latency p50", value: p50, unit: "ms", detail: latDetail });
    ctx.record({ key: "workflow.p99", scenario: "Workflows", metric: "step latency p99", value: p99, unit: "ms" });

    const long = await lateCpu(ctx, app, ferry.origin, pid);
    ctx.record({
      key: "workflow.steps50",
      scenario: "Workflows",
      metric: "50-step runs, steps/s",
      value: long.r.stepsPerSec,
      unit: "steps/s",
      detail: `${long.r.finished} runs started together, in ${long.r.seconds.toFixed(1)} s; ${costDetail(long.r)}`,
    });
    const ratio = long.early && long.late ? long.late / long.early : undefined;
    ctx.record({
      key: "workflow.lateCpu",
      scenario: "Workflows",
      metric: "50-step runs: Ferry CPU of the last steps ÷ the first",
      value: ratio,
      unit: "×",
      detail:
        long.early && long.late
          ? `${(long.early * 1e6).toFixed(0)} µs/step early, ${(long.late * 1e6).toFixed(0)} µs/step late`
          : "not measured (too few CPU samples)",
    });

    if (!ctx.profile) return;
    // The same saturated load against a second Ferry under `node --cpu-prof`: where a step's CPU goes.
    const profDir = join(ctx.workDir, "workflow-profile");
    const profiled = await startFerry({
      workDir: ctx.workDir,
      name: "workflow-profiled",
      env: { FERRY_DIALECT: "upstash" },
      nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profDir}`],
    });
    ctx.defer(() => profiled.stop());
    const profPhase = { ...phase, origin: profiled.origin, ferryPid: profiled.child.pid };
    await saturatedRuns({ ...profPhase, runs: pick(ctx, 200, 20), concurrency });
    const pr = await saturatedRuns({ ...profPhase, runs, concurrency });
    await profiled.stop(); // the profile is written when the process exits
    const file = findProfile(profDir);
    ctx.section(
      "Workflow CPU profile, main thread (Ferry child under `node --cpu-prof`, saturated 3-step runs)",
      file
        ? `Profiled run: ${pr.stepsPerSec.toFixed(0)} steps/s (${costDetail(pr)}); profiling slows it down.\n\n${profileMarkdown(summarizeProfile(file, 25))}`
        : "No profile was written (the Ferry child did not exit cleanly).",
    );
  },
};
