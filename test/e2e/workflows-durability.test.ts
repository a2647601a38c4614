import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@upstash/workflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { type FreshDatabase, freshDatabase, postgresAvailable } from "../helpers/postgres.js";
import { type FerryProcess, spawnFerry } from "../helpers/process.js";
import { startTestServer, TEST_CURRENT_KEY, TEST_NEXT_KEY, TEST_TOKEN, testStore, type TestServer } from "../helpers/server.js";
import { WorkflowApp } from "../helpers/workflow-app.js";

/**
 * Workflow runs survive a SIGKILL of Ferry mid-run (docs/workflows.md "Durability"): no step is lost, the runs end
 * with the right result, a sleeping run's timer fires after the restart. On PostgreSQL, two nodes share runs.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("a SIGKILL of Ferry in the middle of workflow runs", () => {
  let db: FreshDatabase | undefined;
  beforeAll(async () => {
    if (testStore === "postgres") db = await freshDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("loses no step and applies none twice; a sleep's timer fires after the restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ferry-wf-kill-"));
    dirs.push(dataDir);
    const port = await freePort();
    const env = {
      DATABASE_URL: db?.url ?? `sqlite:${join(dataDir, "ferry.db")}`,
      FERRY_TOKEN: TEST_TOKEN,
      FERRY_CURRENT_SIGNING_KEY: TEST_CURRENT_KEY,
      FERRY_NEXT_SIGNING_KEY: TEST_NEXT_KEY,
      FERRY_DIALECT: "upstash",
      FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1",
      FERRY_PORT: String(port),
      FERRY_LEASE_MS: "2000",
    };
    const ferryUrl = `http://127.0.0.1:${port}`;
    const app = await WorkflowApp.start(ferryUrl, TEST_TOKEN);
    const client = new Client({ baseUrl: ferryUrl, token: TEST_TOKEN });
    const STEPS = 12;
    let executed = 0;
    const url = app.workflow("/wf/long", async (context) => {
      const input = context.requestPayload as { run: number };
      const outs: number[] = [];
      for (let i = 0; i < STEPS; i++) {
        outs.push(
          await context.run(`step-${i}`, () => {
            executed++;
            return input.run * 100 + i;
          }),
        );
        if (i === 3) await context.sleep("nap", 2);
      }
      return outs;
    });
    let ferry: FerryProcess = await spawnFerry(env);
    try {
      const runs: string[] = [];
      for (let r = 0; r < 4; r++) runs.push((await client.trigger({ url, body: { run: r } })).workflowRunId);
      await eventually(() => expect(executed).toBeGreaterThanOrEqual(12), 20_000);
      ferry.child.kill("SIGKILL");
      await ferry.exited;
      ferry = await spawnFerry(env);
      for (const [r, id] of runs.entries()) {
        const run = await eventually(async () => {
          const { runs: logs } = await client.logs({ workflowRunId: id });
          expect(logs[0]?.workflowState).toBe("RUN_SUCCESS");
          return logs[0]!;
        }, 60_000);
        expect(JSON.parse(run.workflowRunResponse!)).toEqual(Array.from({ length: STEPS }, (_, i) => r * 100 + i));
      }
    } finally {
      if (ferry.child.exitCode === null && ferry.child.signalCode === null) ferry.child.kill("SIGTERM");
      await ferry.exited;
      await app.close();
    }
  }, 120_000);
});

describe("a wait's timeout across a restart", () => {
  it("fires after Ferry restarts, once, and the run continues with timeout: true", async () => {
    const port = await freePort();
    const env = { FERRY_DIALECT: "upstash", FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1", FERRY_PORT: String(port) };
    const first = await startTestServer({ env });
    const app = await WorkflowApp.start(`http://127.0.0.1:${port}`, first.token);
    let second: TestServer | undefined;
    try {
      const client = new Client({ baseUrl: `http://127.0.0.1:${port}`, token: first.token });
      const url = app.workflow("/wf/wait-restart", async (context) => {
        const event = await context.waitForEvent("wait", "never-comes", { timeout: 4 });
        return { timeout: event.timeout };
      });
      const { workflowRunId } = await client.trigger({ url, body: "x" });
      const [waiter] = await eventually(async () => {
        const waiters = await client.getWaiters({ eventId: "never-comes" });
        expect(waiters).toHaveLength(1);
        return waiters;
      }, 10_000);
      await first.stop({ keepData: true });
      // Stopped before the deadline: the timeout can only fire on the restarted Ferry.
      expect(Date.now()).toBeLessThan(Number(waiter!.deadline) * 1000);
      second = await startTestServer({ env, dataDir: first.dataDir });
      const run = await eventually(async () => {
        const { runs } = await client.logs({ workflowRunId });
        expect(runs[0]?.workflowState).toBe("RUN_SUCCESS");
        return runs[0]!;
      }, 20_000);
      expect(JSON.parse(run.workflowRunResponse!)).toEqual({ timeout: true });
      expect(await client.getWaiters({ eventId: "never-comes" })).toEqual([]);
    } finally {
      await app.close();
      await second?.stop();
    }
  }, 60_000);
});

describe.runIf(postgresAvailable())("workflow runs on two PostgreSQL nodes", () => {
  let db: FreshDatabase;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(async () => {
    for (const s of servers.splice(0)) await s.stop();
    await db.drop();
  });

  it("a notify through one node reaches a waiter registered through the other; every step runs on either node", async () => {
    const env = { DATABASE_URL: db.url, FERRY_DIALECT: "upstash", FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1" };
    const a = await startTestServer({ env, store: "postgres" });
    servers.push(a);
    const b = await startTestServer({ env, store: "postgres" });
    servers.push(b);
    // The app talks to node A; deliveries come from whichever node claims them.
    const app = await WorkflowApp.start(a.url, a.token);
    try {
      const counts = new Map<string, number>();
      const url = app.workflow("/wf/two-nodes", async (context) => {
        const outs: number[] = [];
        for (let i = 0; i < 6; i++) {
          outs.push(
            await context.run(`s${i}`, () => {
              counts.set(`${context.workflowRunId}/${i}`, (counts.get(`${context.workflowRunId}/${i}`) ?? 0) + 1);
              return i;
            }),
          );
        }
        const event = await context.waitForEvent("wait", `evt-${context.workflowRunId}`, { timeout: "1h" });
        return { outs, event: event.eventData };
      });
      const viaA = new Client({ baseUrl: a.url, token: a.token });
      const viaB = new Client({ baseUrl: b.url, token: b.token });
      const ids: string[] = [];
      for (let r = 0; r < 6; r++) ids.push((await viaA.trigger({ url, body: String(r) })).workflowRunId);
      for (const id of ids) {
        await eventually(async () => expect((await viaB.getWaiters({ eventId: `evt-${id}` })).length).toBe(1), 30_000);
        const notified = await viaB.notify({ eventId: `evt-${id}`, eventData: id });
        expect(notified).toHaveLength(1);
      }
      for (const id of ids) {
        const run = await eventually(async () => {
          const { runs } = await viaB.logs({ workflowRunId: id });
          expect(runs[0]?.workflowState).toBe("RUN_SUCCESS");
          return runs[0]!;
        }, 30_000);
        expect(JSON.parse(run.workflowRunResponse!)).toEqual({ outs: [0, 1, 2, 3, 4, 5], event: id });
        // The history holds each result once: no node appended a step another had applied.
        const results = run.steps
          .flatMap((g) => g.steps as unknown[])
          .filter((s) => (s as { stepType?: string }).stepType === "Run");
        expect(results).toHaveLength(6);
      }
    } finally {
      await app.close();
    }
  }, 120_000);
});
