import { Agent, request } from "undici";
import { describe, expect, it } from "vitest";
import { freePort } from "../helpers/postgres.js";
import { type FerryProcess, runFerry, spawnFerry } from "../helpers/process.js";
import { scratchDatabases } from "../helpers/scratch-database.js";
import { TEST_TOKEN, testStore } from "../helpers/server.js";

/**
 * Start-up keeps every connection (issue 26, item 1; src/http/boot-listener.ts): one listener from the first
 * accepted connection to the last. Clients hammer a spawned `ferry serve` from before it listens until well after
 * it is ready; once one request got an answer, every request gets either a real answer or a 503 with a JSON
 * `error` and `Retry-After`, never a reset or a refused connection.
 */
const { cleanup, databaseUrl } = scratchDatabases("ferry-startup-");

interface Tally {
  refusedBeforeFirstAnswer: number;
  starting: number;
  real: number;
  /** What must never happen, with how often it did. */
  bad: Record<string, number>;
}

/** Bounded: at most `maxRequests` per worker, and it stops `realAnswers` real answers after the app took over. */
async function hammer(
  base: string,
  tally: Tally,
  opts: { keepAlive: boolean; path: string; maxRequests: number; realAnswers: number; isReal: (status: number, body: string) => boolean },
): Promise<void> {
  const agent = new Agent({ pipelining: 1, ...(opts.keepAlive ? {} : { keepAliveTimeout: 1, keepAliveMaxTimeout: 1 }) });
  try {
    let real = 0;
    for (let i = 0; i < opts.maxRequests && real < opts.realAnswers; i++) {
      try {
        const res = await request(`${base}${opts.path}`, {
          dispatcher: agent,
          headers: { authorization: `Bearer ${TEST_TOKEN}`, ...(opts.keepAlive ? {} : { connection: "close" }) },
        });
        const body = await res.body.text();
        if (opts.isReal(res.statusCode, body)) {
          real++;
          tally.real++;
        } else if (res.statusCode === 503 && res.headers["retry-after"] === "1" && /"error":"[^"]+"/.test(body)) {
          tally.starting++;
        } else {
          const what = `${opts.path}: ${res.statusCode} retry-after ${String(res.headers["retry-after"])} ${body.slice(0, 80)}`;
          tally.bad[what] = (tally.bad[what] ?? 0) + 1;
        }
      } catch (error) {
        const code = (error as { code?: string }).code ?? String(error);
        // Before the process listens, a refused connection is the only possible answer.
        if (tally.starting + tally.real === 0 && code === "ECONNREFUSED") tally.refusedBeforeFirstAnswer++;
        else tally.bad[`${opts.path}: ${code}`] = (tally.bad[`${opts.path}: ${code}`] ?? 0) + 1;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
  } finally {
    await agent.close();
  }
}

describe(`start-up on ${testStore}`, () => {
  it("answers every request from the first accepted connection on: 503 with a body and Retry-After, then the app", async () => {
    const port = await freePort();
    const url = await databaseUrl();
    const spawned = spawnFerry({ DATABASE_URL: url, FERRY_TOKEN: TEST_TOKEN, FERRY_PORT: String(port) }, 60_000);
    let ferry: FerryProcess | undefined;
    cleanup.push(async () => {
      ferry ??= await spawned.catch(() => undefined);
      if (ferry && ferry.child.exitCode === null) {
        ferry.child.kill("SIGTERM");
        await ferry.exited;
      }
    });
    const base = `http://127.0.0.1:${port}`;
    const tally: Tally = { refusedBeforeFirstAnswer: 0, starting: 0, real: 0, bad: {} };
    const health = (status: number, body: string) => status === 200 && body === '{"status":"ok"}';
    const queues = (status: number, body: string) => status === 200 && body.startsWith("[");
    await Promise.all([
      hammer(base, tally, { keepAlive: true, path: "/health", maxRequests: 20_000, realAnswers: 200, isReal: health }),
      hammer(base, tally, { keepAlive: false, path: "/health", maxRequests: 20_000, realAnswers: 200, isReal: health }),
      hammer(base, tally, { keepAlive: true, path: "/v2/queues", maxRequests: 20_000, realAnswers: 200, isReal: queues }),
      hammer(base, tally, { keepAlive: false, path: "/v2/queues", maxRequests: 20_000, realAnswers: 200, isReal: queues }),
    ]);
    ferry = await spawned;
    expect(tally.bad).toEqual({});
    // The hammering saw the start-up (a 503 "starting") and the app's answers afterwards.
    expect(tally.starting).toBeGreaterThan(0);
    expect(tally.real).toBe(800);
  }, 120_000);
});

describe("an unreachable PostgreSQL at start", () => {
  it("is retried with one short line per attempt, /health never says 200, and the process exits 1 naming the database", async () => {
    const [port, dbPort] = [await freePort(), await freePort()];
    // Nothing listens on dbPort: every connection is refused.
    const running = runFerry(["serve"], {
      DATABASE_URL: `postgres://ferry:s3cret-password@127.0.0.1:${dbPort}/ferrydb`,
      FERRY_DATABASE_WAIT_MS: "1500",
      FERRY_TOKEN: TEST_TOKEN,
      FERRY_PORT: String(port),
      FERRY_HOST: "127.0.0.1",
      FERRY_LOG_LEVEL: "info",
    }, 60_000);
    let exited = false;
    void running.then(() => {
      exited = true;
    });
    // While it waits, /health answers 503 "starting" (before it listens, the connection is refused).
    const health: number[] = [];
    for (let i = 0; i < 2000 && !exited; i++) {
      try {
        const res = await request(`http://127.0.0.1:${port}/health`, { reset: true });
        await res.body.text();
        health.push(res.statusCode);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    const { code, stdout, stderr } = await running;
    expect(code).toBe(1);
    expect(stderr).toBe(
      `ferry failed to start: database postgres://ferry@127.0.0.1:${dbPort}/ferrydb not reachable within 1500 ms ` +
        `(FERRY_DATABASE_WAIT_MS), ${stderr.match(/, (\d+) attempts/)?.[1]} attempts: connect ECONNREFUSED 127.0.0.1:${dbPort}\n`,
    );
    expect(`${stdout}${stderr}`).not.toContain("s3cret-password");
    const attempts = stdout.split("\n").filter((line) => line.includes("not reachable"));
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    for (const line of attempts) {
      expect(line.length).toBeLessThan(400);
      expect(line).not.toContain("stack");
      expect(JSON.parse(line).msg).toMatch(/^database postgres:\/\/ferry@127\.0\.0\.1:\d+\/ferrydb not reachable \(connect ECONNREFUSED [^)]+\); attempt \d+, next in \d+ ms$/);
    }
    expect(health.length).toBeGreaterThan(0);
    expect(health.filter((status) => status !== 503)).toEqual([]);
  }, 90_000);
});
