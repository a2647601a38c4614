import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { OffsetClock } from "../../src/domain/clock.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * What the schedule tests share (schedules.test.ts, schedules-changes.test.ts): an injected clock, and servers and
 * receivers stopped after each test of the file that imports this.
 */
export const SEC = 1000;
export const MIN = 60 * SEC;
export const HOUR = 60 * MIN;
/** A whole hour (UTC) far from any daylight-saving change; every test positions the injected clock around it. */
export const BASE = Date.UTC(2030, 0, 7, 12, 0, 0);

/**
 * The scheduler runs only when a test asks (runOnce) or at start-up; leases outlive every clock jump, so the
 * rescuer never re-delivers a message whose attempt is still running when a test moves time forward.
 */
const ENV = { FERRY_SCHEDULER_INTERVAL_MS: "3600000", FERRY_LEASE_MS: "3600000" };

// Everything a test starts is stopped after it, whatever the outcome.
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

export function setNow(clock: OffsetClock, ms: number): void {
  clock.offsetMs = ms - Date.now();
}

export async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  cleanup.push(() => r.close());
  return r;
}

export async function boot(
  clock: OffsetClock,
  opts: { env?: Record<string, string>; dataDir?: string } = {},
): Promise<TestServer> {
  const server = await startTestServer({
    clock,
    env: { ...ENV, ...opts.env },
    ...(opts.dataDir ? { dataDir: opts.dataDir } : {}),
  });
  let stopped = false;
  const stop = server.stop.bind(server);
  server.stop = async (o) => {
    if (stopped) return;
    stopped = true;
    await stop({ keepData: opts.dataDir !== undefined, ...o });
  };
  cleanup.push(() => server.stop());
  return server;
}

/** A data directory that outlives one server (restart tests); removed after the test. */
export function sharedDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ferry-sched-"));
  cleanup.unshift(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function create(server: TestServer, destination: string, headers: Record<string, string>, body?: string) {
  return server.call("POST", `/v2/schedules/${destination}`, { headers, ...(body !== undefined ? { body } : {}) });
}

export const runScheduler = (server: TestServer) => server.ferry.loops.scheduler!.runOnce() as Promise<number | undefined>;

/** Waits until `count` requests arrived and each of those messages has finished (left the hot table). */
export async function settle(server: TestServer, r: Receiver, count: number) {
  const got = await r.waitForCount(count);
  for (const req of got) {
    const id = String(req.headers["svc-message-id"]);
    for (let i = 0; i < 200; i++) {
      if ((await server.call("GET", `/v2/messages/${id}`)).status === 404) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  return got;
}

