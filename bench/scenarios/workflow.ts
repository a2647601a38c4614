import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client as QstashClient } from "@upstash/qstash";
import { Client, serve } from "@upstash/workflow";
import { BENCH_TOKEN, startFerry } from "../lib/ferry.js";
import { cpuSecondsOf } from "../lib/proc.js";
import { type BenchContext, pick, type Scenario } from "../lib/scenario.js";
import { percentile } from "../lib/stats.js";

type Route = Parameters<typeof serve>[0];

/**
 * Workflows (docs/workflows.md, issue 25's speed section): the official `@upstash/workflow` SDK's `serve` in an app
 * inside the bench process, driven by a Ferry in the upstash dialect. Each step is one delivery to the app plus one
 * step publish back to Ferry.
 * - steps/s of 3-step and of 50-step runs (runs started together, `concurrent` at a time), against P1's msg/s;
 * - step latency: from the step's function running in the app (its result is published right after) to the next call
 *   of the run arriving at the app, p50/p99;
 * - a 50-step run's late steps against its early ones: Ferry's CPU over the first fifth of all steps against the last
 *   fifth (the runs start together and advance at about the same pace, so these are about steps 1–10 and 41–50).
 */
class WorkflowBenchApp {
  readonly arrivals = new Map<string, number>();
  readonly stepAt = new Map<string, number>();
  readonly latencies: number[] = [];
  readonly finished = new Set<string>();
  steps = 0;
  onStep: (() => void) | undefined;
  private handler: ((r: Request) => Promise<Response>) | undefined;

  constructor(private readonly server: Server) {}

  static async start(): Promise<WorkflowBenchApp> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const runId = req.headers["upstash-workflow-runid"];
        const at = performance.now();
        if (typeof runId === "string") {
          const stepAt = app.stepAt.get(runId);
          if (stepAt !== undefined) {
            app.latencies.push(at - stepAt);
            app.stepAt.delete(runId);
          }
        }
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        void app.handler!(new Request(`${app.base}${req.url}`, { method: req.method, headers, body })).then(
          async (response) => {
            res.writeHead(response.status, Object.fromEntries(response.headers));
            res.end(Buffer.from(await response.arrayBuffer()));
          },
          () => res.writeHead(500).end(),
        );
      });
    });
    const app = new WorkflowBenchApp(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return app;
  }

  get base(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Serves a run of `steps` steps at /wf. */
  mount(ferry: string, steps: number): void {
    const route: Route = async (context) => {
      let last = 0;
      for (let i = 0; i < steps; i++) {
        last = await context.run(`s${i}`, () => {
          this.steps++;
          this.stepAt.set(context.workflowRunId, performance.now());
          this.onStep?.();
          return i;
        });
      }
      this.finished.add(context.workflowRunId);
      return last;
    };
    this.handler = serve(route, {
      qstashClient: new QstashClient({ baseUrl: ferry, token: BENCH_TOKEN }),
      receiver: undefined,
      env: {},
    }).handler as (r: Request) => Promise<Response>;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function runBatch(
  ctx: BenchContext,
  app: WorkflowBenchApp,
  origin: string,
  pid: number,
  p: { runs: number; steps: number },
) {
  app.mount(origin, p.steps);
  app.finished.clear();
  app.latencies.length = 0;
  app.steps = 0;
  const total = p.runs * p.steps;
  const fifth = Math.floor(total / 5);
  const marks: number[] = [];
  app.onStep = () => {
    if (app.steps === 1 || app.steps === fifth || app.steps === total - fifth || app.steps === total) {
      marks.push(cpuSecondsOf(pid));
    }
  };
  const client = new Client({ baseUrl: origin, token: BENCH_TOKEN });
  const started = performance.now();
  await Promise.all(Array.from({ length: p.runs }, (_, i) => client.trigger({ url: `${app.base}/wf`, body: String(i) })));
  const deadline = Date.now() + pick(ctx, 300_000, 60_000);
  while (app.finished.size < p.runs && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - started) / 1000;
  app.onStep = undefined;
  const early = marks.length === 4 ? (marks[1]! - marks[0]!) / fifth : undefined;
  const late = marks.length === 4 ? (marks[3]! - marks[2]!) / fifth : undefined;
  return { stepsPerSec: app.steps / seconds, finished: app.finished.size, seconds, early, late };
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

    const short = await runBatch(ctx, app, ferry.origin, pid, { runs: pick(ctx, 2000, 100), steps: 3 });
    ctx.record({
      key: "workflow.steps3",
      scenario: "Workflows",
      metric: "3-step runs, steps/s",
      value: short.stepsPerSec,
      unit: "steps/s",
      detail: `${short.finished} runs in ${short.seconds.toFixed(1)} s`,
    });
    const p50 = percentile(app.latencies, 50);
    const p99 = percentile(app.latencies, 99);
    ctx.record({ key: "workflow.p50", scenario: "Workflows", metric: "step latency p50", value: p50, unit: "ms" });
    ctx.record({ key: "workflow.p99", scenario: "Workflows", metric: "step latency p99", value: p99, unit: "ms" });

    const long = await runBatch(ctx, app, ferry.origin, pid, { runs: pick(ctx, 100, 10), steps: 50 });
    ctx.record({
      key: "workflow.steps50",
      scenario: "Workflows",
      metric: "50-step runs, steps/s",
      value: long.stepsPerSec,
      unit: "steps/s",
      detail: `${long.finished} runs in ${long.seconds.toFixed(1)} s`,
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
  },
};
