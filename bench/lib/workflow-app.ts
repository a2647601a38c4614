import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client as QstashClient } from "@upstash/qstash";
import { serve } from "@upstash/workflow";
import { BENCH_TOKEN } from "./ferry.js";

type Route = Parameters<typeof serve>[0];

/**
 * The workflow app of the `workflow` scenario (bench/README.md): the official `@upstash/workflow` SDK's `serve` in a
 * `node:http` server inside the bench process, as a user would mount it. A run of `steps` steps runs `context.run`
 * `steps` times; each step is one delivery from Ferry plus one step publish back (a `POST /v2/batch` of one item).
 *
 * It records, per run, when a step's function ran (its result is published right after) and, when the run's next
 * call arrives, the time between the two: the step latency of issue 25 ("step published → next call arriving").
 */
export class WorkflowBenchApp {
  /** Latencies (ms) recorded since the last `reset`. */
  readonly latencies: number[] = [];
  readonly finished = new Set<string>();
  steps = 0;
  /** Called after each step's function ran (the bench reads CPU marks here). */
  onStep: (() => void) | undefined;
  /** Called when a run's route returned (the SDK then ends the run with its last call). */
  onFinish: ((runId: string) => void) | undefined;
  private readonly stepAt = new Map<string, number>();
  private handler: ((r: Request) => Promise<Response>) | undefined;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WorkflowBenchApp> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const runId = req.headers["upstash-workflow-runid"];
        if (typeof runId === "string") app.arrived(runId);
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

  get url(): string {
    return `${this.base}/wf`;
  }

  /** Forgets the counts, latencies and finished runs of the previous phase. */
  reset(): void {
    this.latencies.length = 0;
    this.finished.clear();
    this.stepAt.clear();
    this.steps = 0;
  }

  private arrived(runId: string): void {
    const stepAt = this.stepAt.get(runId);
    if (stepAt === undefined) return;
    this.latencies.push(performance.now() - stepAt);
    this.stepAt.delete(runId);
  }

  /** Serves runs of `steps` steps at /wf, publishing back to the Ferry at `ferry`. */
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
      if (!this.finished.has(context.workflowRunId)) {
        this.finished.add(context.workflowRunId);
        this.onFinish?.(context.workflowRunId);
      }
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
