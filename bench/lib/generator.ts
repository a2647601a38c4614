import { setTimeout as sleep } from "node:timers/promises";
import { type Dispatcher, Pool } from "undici";
import { nowMs } from "./receiver.js";

/** One publish: path (with query) on the target's origin, headers and body. */
export interface OutgoingRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  method?: Dispatcher.HttpMethod;
}

export interface LoadResult {
  /** Requests started. */
  sent: number;
  /** Requests answered 2xx. */
  acked: number;
  /** Non-2xx answers and network errors. */
  errors: number;
  /** Open loop only: sends skipped because too many were in flight (the target fell behind). */
  skipped: number;
  firstError?: string;
  startedAt: number;
  /** When the last answer came back. */
  endedAt: number;
  /** Acknowledgements per second over [startedAt, endedAt]. */
  ackRate: number;
  /** Send → 2xx answer, in ms, per acknowledged request. */
  ackLatencies: number[];
}

/** A deterministic 1 KiB (by default) printable body, so every system stores and forwards the same bytes. */
export function makeBody(bytes = 1024): Buffer {
  const pattern = "ferry-bench-0123456789-abcdefghijklmnopqrstuvwxyz-";
  return Buffer.from(pattern.repeat(Math.ceil(bytes / pattern.length)).slice(0, bytes));
}

async function sendOne(pool: Pool, req: OutgoingRequest, result: LoadResult, timeoutMs: number): Promise<void> {
  const start = nowMs();
  try {
    const res = await pool.request({
      path: req.path,
      method: req.method ?? "POST",
      headers: req.headers,
      body: req.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await res.body.text();
    if (res.statusCode >= 200 && res.statusCode < 300) {
      result.acked++;
      result.ackLatencies.push(nowMs() - start);
    } else {
      result.errors++;
      result.firstError ??= `HTTP ${res.statusCode}: ${text.slice(0, 200)}`;
    }
  } catch (error) {
    result.errors++;
    result.firstError ??= error instanceof Error ? error.message : String(error);
  }
}

const finish = (result: LoadResult): LoadResult => {
  result.endedAt = nowMs();
  const seconds = (result.endedAt - result.startedAt) / 1000;
  result.ackRate = seconds > 0 ? result.acked / seconds : 0;
  return result;
};

const emptyResult = (): LoadResult => ({
  sent: 0,
  acked: 0,
  errors: 0,
  skipped: 0,
  startedAt: nowMs(),
  endedAt: 0,
  ackRate: 0,
  ackLatencies: [],
});

/**
 * One undici Pool per origin, `connections` split evenly between them. Several origins are several nodes of one
 * system (PostgreSQL multi-node): publishers and sends are spread over them round-robin.
 */
function poolsFor(origin: string | string[], connections: number): Pool[] {
  const origins = typeof origin === "string" ? [origin] : origin;
  if (origins.length === 0) throw new Error("no origin to send to");
  const each = Math.max(1, Math.ceil(connections / origins.length));
  return origins.map((o) => new Pool(o, { connections: each, pipelining: 1, keepAliveTimeout: 30_000 }));
}

/**
 * Closed loop: `concurrency` publishers, each sending its next request when the previous one is answered, until
 * `total` requests were sent or `maxMs` passed (both bounds always apply). With several origins, publisher `w`
 * sends to origin `w mod n`.
 */
export async function closedLoop(opts: {
  origin: string | string[];
  concurrency: number;
  total: number;
  maxMs: number;
  make: (i: number) => OutgoingRequest;
}): Promise<LoadResult> {
  const pools = poolsFor(opts.origin, opts.concurrency);
  const result = emptyResult();
  const deadline = result.startedAt + opts.maxMs;
  let next = 0;
  const worker = async (pool: Pool) => {
    while (next < opts.total && nowMs() < deadline) {
      const i = next++;
      result.sent++;
      await sendOne(pool, opts.make(i), result, 30_000);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, (_, w) => worker(pools[w % pools.length]!)));
  finish(result);
  await Promise.all(pools.map((p) => p.close()));
  return result;
}

/**
 * Open loop at a fixed rate: every millisecond it sends whatever the schedule says is due, whether or not earlier
 * requests were answered (so a slow server cannot slow the generator down and hide its latency). Bounded by the
 * schedule's length and by `maxInFlight` (sends beyond it are counted as skipped). With several origins, send `i`
 * goes to origin `i mod n`.
 */
export async function openLoop(opts: {
  origin: string | string[];
  ratePerSec: number;
  durationMs: number;
  connections: number;
  maxInFlight: number;
  make: (i: number, sentAt: number) => OutgoingRequest;
}): Promise<LoadResult> {
  const pools = poolsFor(opts.origin, opts.connections);
  const result = emptyResult();
  const total = Math.floor((opts.ratePerSec * opts.durationMs) / 1000);
  const pending = new Set<Promise<void>>();
  let scheduled = 0;
  while (scheduled < total) {
    const elapsed = nowMs() - result.startedAt;
    if (elapsed > opts.durationMs + 5_000) break; // the event loop stalled for seconds: give up, bounded
    const due = Math.min(total, Math.floor((elapsed * opts.ratePerSec) / 1000));
    for (; scheduled < due; scheduled++) {
      if (pending.size >= opts.maxInFlight) {
        result.skipped++;
        continue;
      }
      result.sent++;
      const pool = pools[scheduled % pools.length]!;
      const p: Promise<void> = sendOne(pool, opts.make(scheduled, nowMs()), result, 30_000).finally(() =>
        pending.delete(p),
      );
      pending.add(p);
    }
    await sleep(1);
  }
  await Promise.race([Promise.allSettled([...pending]), sleep(30_000)]);
  finish(result);
  await Promise.all(pools.map((p) => p.close()));
  return result;
}
