import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** What flow-control.test.ts and flow-control-endpoints.test.ts share: their setup, hooks and helpers. */


export const DAY_MS = 86_400_000;

export let server: TestServer;
export let clock: OffsetClock;
export const receivers: Receiver[] = [];

export async function newReceiver(): Promise<Receiver> {
  const r = await Receiver.start();
  receivers.push(r);
  return r;
}

export function flowHeaders(key: string, value: string, extra: Record<string, string> = {}): Record<string, string> {
  return { "svc-flow-control-key": key, "svc-flow-control-value": value, ...extra };
}

export async function publish(s: TestServer, url: string, headers: Record<string, string>, body = "x"): Promise<string> {
  const res = await s.call("POST", `/v2/publish/${url}`, { headers, body });
  expect(res.status, res.text).toBe(200);
  return res.json.messageId as string;
}

/** Publishes `n` messages, a few requests at a time; the bodies are their index, to check the order. */
export async function publishMany(s: TestServer, n: number, url: string, headers: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 10) {
    const chunk = Array.from({ length: Math.min(10, n - i) }, (_, j) => publish(s, url, headers, String(i + j)));
    ids.push(...(await Promise.all(chunk)));
  }
  return ids;
}

export const flowKey = async (s: TestServer, key: string) => s.call("GET", `/v2/flowControl/${encodeURIComponent(key)}`);

/**
 * Counts per rate window as Ferry opens them (docs/flow-control.md): a window begins at the first start after the
 * previous one ended and lasts `periodMs`; it is not a sliding window.
 */
export function fixedWindows(times: number[], periodMs: number): number[] {
  const counts: number[] = [];
  let start = Number.NEGATIVE_INFINITY;
  for (const t of [...times].sort((a, b) => a - b)) {
    if (t >= start + periodMs) {
      start = t;
      counts.push(0);
    }
    counts[counts.length - 1]!++;
  }
  return counts;
}

/** The largest number of arrivals inside any interval of `windowMs` (a sliding window). */
export function maxInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

beforeAll(async () => {
  clock = new OffsetClock();
  server = await startTestServer({ clock });
});
afterEach(() => {
  clock.offsetMs = 0;
});
afterAll(async () => {
  await server.stop();
  await Promise.all(receivers.map((r) => r.close()));
});
