import type { ReceivedRequest } from "../helpers/receiver.js";

/**
 * The plan and the books of the multi-node soak test: which messages are published (pure, deterministic), and the
 * checks run on what the receiver recorded afterwards. Kept apart from the orchestration so each rule reads alone.
 */

export type Kind = "plain" | "delayed" | "queue" | "fc-par" | "fc-rate";

export interface Planned {
  /** Global index: the message's identity across publish retries (its deduplication id is derived from it). */
  seq: number;
  /** Publisher lane: each lane publishes its messages one request at a time, in seq order. */
  lane: number;
  kind: Kind;
  /** Receiver path; it carries kind and seq, so a delivery says what it is. */
  path: string;
  delaySec?: number;
  queue?: string;
}

export const LANES = 4;
/** Each delivery of the parallelism key takes this long at the receiver, so that 4 at once is a real bound. */
export const PAR_KEY = { key: "ledger-par", value: "parallelism=4", pin: "parallelism=4", parallelism: 4, receiverDelayMs: 100 };
/** 1,000 messages at 20 a second: at least 50 s of rate-limited delivery, across the node kill and the crash. */
export const RATE_KEY = {
  key: "ledger-rate",
  value: "rate=20, period=1s",
  pin: "rate=20&period=1",
  rate: 20,
  periodMs: 1000,
};

/** Per ten messages of a lane: 4 immediate, 2 delayed (1–7 s), 2 into the lane's FIFO queue, 1 per flow key. */
const PATTERN: Kind[] = ["plain", "delayed", "queue", "plain", "fc-par", "plain", "queue", "delayed", "fc-rate", "plain"];

export function plan(total: number): Planned[] {
  return Array.from({ length: total }, (_, seq) => {
    const lane = seq % LANES;
    const kind = PATTERN[Math.floor(seq / LANES) % PATTERN.length]!;
    const m: Planned = { seq, lane, kind, path: kind === "queue" ? `/queue/${lane}/${seq}` : `/${kind}/${seq}` };
    if (kind === "delayed") m.delaySec = 1 + (seq % 7);
    if (kind === "queue") m.queue = `ledger-q${lane}`;
    return m;
  });
}

/** Headers a message is published with (as a single publish or as a batch item). */
export function publishHeaders(m: Planned): Record<string, string> {
  // A retried publish (503, or a node gone mid-request) must not create a second message: the user's usual answer.
  const h: Record<string, string> = { "Svc-Deduplication-Id": `ledger-${m.seq}` };
  if (m.delaySec !== undefined) h["Svc-Delay"] = `${m.delaySec}s`;
  if (m.kind === "fc-par") Object.assign(h, { "Svc-Flow-Control-Key": PAR_KEY.key, "Svc-Flow-Control-Value": PAR_KEY.value });
  if (m.kind === "fc-rate") {
    Object.assign(h, { "Svc-Flow-Control-Key": RATE_KEY.key, "Svc-Flow-Control-Value": RATE_KEY.value });
  }
  return h;
}

/** The concurrency group the receiver counts a request in: the parallelism key, or the FIFO queue it belongs to. */
export function concurrencyGroup(url: string): string | undefined {
  if (url.startsWith("/fc-par/")) return "fc-par";
  const queue = /^\/queue\/(\d+)\//.exec(url);
  return queue ? `queue-${queue[1]}` : undefined;
}

export const seqOf = (r: ReceivedRequest) => Number(r.url.slice(r.url.lastIndexOf("/") + 1));
export const idOf = (r: ReceivedRequest) => String(r.headers["svc-message-id"]);

export interface Books {
  /** messageId → plan entry, for every acknowledged publish. */
  acked: Map<string, Planned>;
  /** seq → when its first publish attempt was sent (the message cannot have been created earlier). */
  firstSentAt: Map<number, number>;
}

/** What the receiver saw against what was acknowledged. */
export function balance(books: Books, arrivals: ReceivedRequest[]) {
  const delivered = new Set(arrivals.map(idOf));
  return {
    lost: [...books.acked.keys()].filter((id) => !delivered.has(id)),
    unknown: [...delivered].filter((id) => !books.acked.has(id)),
    duplicates: arrivals.length - delivered.size,
    arrivals: arrivals.length,
  };
}

/** First arrival per message id, in arrival order. */
function firstArrivals(arrivals: ReceivedRequest[]): ReceivedRequest[] {
  const seen = new Set<string>();
  return arrivals.filter((r) => !seen.has(idOf(r)) && seen.add(idOf(r)));
}

/**
 * FIFO per queue: each lane published its queue's messages one request after the other in seq order, so the first
 * arrivals must come in seq order too. A redelivery after a crash repeats a message; it never lets a later one pass.
 */
export function fifoViolations(arrivals: ReceivedRequest[]): string[] {
  const problems: string[] = [];
  for (let lane = 0; lane < LANES; lane++) {
    const order = firstArrivals(arrivals.filter((r) => r.url.startsWith(`/queue/${lane}/`))).map(seqOf);
    for (let i = 1; i < order.length; i++) {
      if (order[i]! < order[i - 1]!) problems.push(`queue ${lane}: ${order[i]} arrived after ${order[i - 1]}`);
    }
  }
  return problems;
}

/**
 * Rate limits are fixed windows (docs/flow-control.md): at most `rate` starts per window, a window lasts `period`,
 * and the next opens only after it. Two consequences the receiver can check exactly: any interval of one period
 * overlaps at most two windows (≤ 2 × rate arrivals), and n starts need ⌈n / rate⌉ windows, so they span at
 * least (⌈n / rate⌉ − 1) periods.
 */
export function rateCheck(arrivals: ReceivedRequest[]) {
  const rated = arrivals.filter((r) => r.url.startsWith("/fc-rate/")).sort((a, b) => a.arrivedAt - b.arrivedAt);
  const times = rated.map((r) => r.arrivedAt);
  let busiestPeriod = 0;
  let busiestStart = 0;
  for (let start = 0, end = 0; start < times.length; start++) {
    while (end < times.length && times[end]! < times[start]! + RATE_KEY.periodMs) end++;
    if (end - start > busiestPeriod) [busiestPeriod, busiestStart] = [end - start, start];
  }
  const spanMs = times.length > 0 ? times[times.length - 1]! - times[0]! : 0;
  const minSpanMs = (Math.ceil(times.length / RATE_KEY.rate) - 1) * RATE_KEY.periodMs;
  /** The busiest period's arrivals (for the report of a failure): seq and arrival time. */
  const busiest = rated.slice(busiestStart, busiestStart + busiestPeriod).map((r) => ({ seq: seqOf(r), at: r.arrivedAt }));
  return { busiestPeriod, spanMs, minSpanMs, busiest };
}

/** Delayed messages that arrived before their delay had passed (counted from the first publish attempt). */
export function earlyArrivals(books: Books, arrivals: ReceivedRequest[]): string[] {
  return firstArrivals(arrivals.filter((r) => r.url.startsWith("/delayed/"))).flatMap((r) => {
    const m = books.acked.get(idOf(r));
    const sentAt = m && books.firstSentAt.get(m.seq);
    if (!m || sentAt === undefined) return [];
    const due = sentAt + m.delaySec! * 1000;
    return r.arrivedAt < due ? [`${m.seq} arrived ${due - r.arrivedAt} ms early`] : [];
  });
}
