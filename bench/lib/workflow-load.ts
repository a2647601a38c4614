import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@upstash/workflow";
import { BENCH_TOKEN } from "./ferry.js";
import { benchCpuSeconds, cpuSecondsOf } from "./proc.js";
import { percentile } from "./stats.js";
import type { WorkflowBenchApp } from "./workflow-app.js";

/**
 * The two loads of the `workflow` scenario (bench/README.md), kept apart because they answer different questions:
 * - `saturatedRuns`: throughput. A fixed number of runs kept in flight (closed loop: a finished run starts the next)
 *   until `runs` have finished: steps/s at saturation, and the CPU each step cost Ferry and the SDK app.
 * - `paced`: latency. Runs started at a fixed rate for a fixed time (open loop: the schedule follows the clock, not
 *   the runs), well under capacity, so a step's latency is Ferry's work on it and not the queue of 2,000 runs started
 *   at once.
 */

export interface PhaseResult {
  runs: number;
  finished: number;
  steps: number;
  seconds: number;
  stepsPerSec: number;
  /** Ferry's CPU (all its threads) per step, µs. */
  ferryUsPerStep: number;
  /** The bench process's CPU per step, µs: the SDK app (deliveries in, step publishes out) and the run triggers. */
  appUsPerStep: number;
  latencies: number[];
}

interface Phase {
  app: WorkflowBenchApp;
  origin: string;
  ferryPid: number;
  steps: number;
  maxMs: number;
}

function newClient(origin: string): Client {
  return new Client({ baseUrl: origin, token: BENCH_TOKEN });
}

async function measured(
  p: Phase,
  runs: number,
  drive: (start: () => void) => Promise<void>,
): Promise<PhaseResult> {
  const { app } = p;
  app.mount(p.origin, p.steps);
  app.reset();
  const client = newClient(p.origin);
  let started = 0;
  const start = () => {
    const i = started++;
    void client.trigger({ url: app.url, body: String(i) }).catch(() => undefined);
  };
  const ferry0 = cpuSecondsOf(p.ferryPid);
  const bench0 = benchCpuSeconds();
  const t0 = performance.now();
  await drive(start);
  const deadline = Date.now() + p.maxMs;
  while (app.finished.size < runs && Date.now() < deadline) await sleep(10);
  const seconds = (performance.now() - t0) / 1000;
  const ferryCpu = cpuSecondsOf(p.ferryPid) - ferry0;
  const benchCpu = benchCpuSeconds() - bench0;
  app.onFinish = undefined;
  const steps = Math.max(1, app.steps);
  return {
    runs,
    finished: app.finished.size,
    steps: app.steps,
    seconds,
    stepsPerSec: app.steps / seconds,
    ferryUsPerStep: (ferryCpu * 1e6) / steps,
    appUsPerStep: (benchCpu * 1e6) / steps,
    latencies: [...app.latencies],
  };
}

/** Throughput: `concurrency` runs in flight until `runs` were started and have finished (bounded by `maxMs`). */
export function saturatedRuns(p: Phase & { runs: number; concurrency: number }): Promise<PhaseResult> {
  return measured(p, p.runs, async (start) => {
    let launched = 0;
    p.app.onFinish = () => {
      if (launched < p.runs) {
        launched++;
        start();
      }
    };
    for (; launched < Math.min(p.concurrency, p.runs); launched++) start();
  });
}

/** Latency: runs started at `ratePerSec` for `durationMs`, whatever the earlier runs do (bounded by `maxMs`). */
export function paced(p: Phase & { ratePerSec: number; durationMs: number }): Promise<PhaseResult> {
  const runs = Math.floor((p.ratePerSec * p.durationMs) / 1000);
  return measured(p, runs, async (start) => {
    const t0 = performance.now();
    let launched = 0;
    while (launched < runs) {
      const due = Math.min(runs, Math.floor(((performance.now() - t0) * p.ratePerSec) / 1000));
      for (; launched < due; launched++) start();
      await sleep(1);
    }
  });
}

export function latencySummary(latencies: number[]): { p50?: number; p99?: number } {
  const out: { p50?: number; p99?: number } = {};
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  if (p50 !== undefined) out.p50 = p50;
  if (p99 !== undefined) out.p99 = p99;
  return out;
}
