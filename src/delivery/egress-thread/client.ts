import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import type { AttemptResponse } from "../../domain/message.js";
import { forTransfer, reviveBuffers } from "../../threads/wire.js";
import type { HttpClient, SendParams } from "../http-client.js";
import type { FromEgressThread, ToEgressThread } from "./wire.js";
import { workerEntry } from "../../threads/worker-entry.js";

/** How many sends went to the egress thread, in how many messages, and how many threads were started. */
export interface EgressThreadStats {
  batches: number;
  sends: number;
  threadsStarted: number;
  /** The running thread, for tests that end it mid-attempt; undefined before the first send or after a failure. */
  worker: Worker | undefined;
}
const STATS = Symbol("egressThreadStats");

/** The counters of a client made by `openEgressThread` (undefined for the in-thread client). */
export function egressThreadStats(http: HttpClient): EgressThreadStats | undefined {
  return (http as unknown as Record<symbol, EgressThreadStats | undefined>)[STATS];
}

/**
 * An `HttpClient` whose requests (signing included) run in the egress thread, src/delivery/egress-thread/worker.ts
 * (docs/threading.md, "The egress thread"). Sends of one event-loop turn travel in one message, their answers
 * likewise. The thread starts with the first send; until it listens, Node queues what is posted to it.
 *
 * If the thread dies, the attempts it held answer as failed (no response: retried like a connection error, so
 * nothing is lost and delivery stays at least once) and the next send starts a new thread.
 */
export function openEgressThread(options: { destinationAllow: string | undefined; log: Logger }): HttpClient {
  const { url, data } = workerEntry(import.meta.url);
  const pending = new Map<number, (response: AttemptResponse) => void>();
  const stats: EgressThreadStats = { batches: 0, sends: 0, threadsStarted: 0, worker: undefined };
  let nextId = 1;
  let outbox: [number, SendParams][] = [];
  let outboxTransfer: ArrayBuffer[] = [];
  let flushScheduled = false;
  let closing = false;
  let closed: (() => void) | undefined;

  /** Answers these sends as failed attempts (no response): the dispatcher retries them like a connection error. */
  const fail = (ids: Iterable<number>, reason: string) => {
    for (const id of [...ids]) {
      const settle = pending.get(id);
      pending.delete(id);
      settle?.({ headers: {}, body: Buffer.alloc(0), error: reason });
    }
  };
  /** The sends posted to the running thread and not answered yet: the ones its death takes with it. */
  let posted = new Set<number>();

  const start = (): Worker => {
    const mine = new Set<number>();
    posted = mine;
    const worker = new Worker(url, {
      workerData: { ...data, destinationAllow: options.destinationAllow },
      // What the thread allocates is short-lived (a request, its response); V8's default young generation let its
      // heap grow by tens of MiB under load. Measured in P4 (compiled): peak RSS 300 MiB with the default, 281 with
      // 8 MiB, 231 without the thread, at the same acknowledgement rate.
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
    });
    stats.threadsStarted++;
    worker.on("message", (message: FromEgressThread) => {
      if ("closed" in message) closed?.();
      else
        for (const [id, response] of message.answers) {
          const settle = pending.get(id);
          pending.delete(id);
          mine.delete(id);
          settle?.(reviveBuffers(response) as AttemptResponse);
        }
    });
    worker.on("error", (error) => options.log.error({ err: error }, "the egress thread failed"));
    worker.on("exit", (code) => {
      if (stats.worker === worker) stats.worker = undefined;
      if (closing) return;
      options.log.error({ code }, "the egress thread exited; its attempts fail and will be retried");
      // Only what this thread held: sends still waiting in the outbox go to the next thread.
      fail(mine, `the egress thread exited (code ${code}) during the attempt`);
    });
    return worker;
  };

  const flush = () => {
    flushScheduled = false;
    const sends = outbox;
    const transfer = outboxTransfer;
    outbox = [];
    outboxTransfer = [];
    if (sends.length === 0) return;
    stats.worker ??= start();
    for (const [id] of sends) posted.add(id);
    stats.batches++;
    stats.sends += sends.length;
    stats.worker.postMessage({ sends } satisfies ToEgressThread, transfer);
  };

  const client: HttpClient & { [STATS]: EgressThreadStats } = {
    [STATS]: stats,
    send: (p) =>
      new Promise((resolve) => {
        if (closing) {
          resolve({ headers: {}, body: Buffer.alloc(0), error: "the egress thread is closed" });
          return;
        }
        const id = nextId++;
        pending.set(id, resolve);
        // The caller keeps its buffers (the message body stays in the dispatcher), so they are copied, not moved.
        outbox.push([id, forTransfer(p, outboxTransfer, false) as SendParams]);
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flush);
        }
      }),
    close: async () => {
      closing = true;
      flush();
      const worker = stats.worker;
      if (!worker) return;
      await new Promise<void>((resolve) => {
        closed = resolve;
        worker.once("exit", () => resolve());
        worker.postMessage({ close: true } satisfies ToEgressThread);
      });
      await worker.terminate();
      fail(pending.keys(), "the egress thread is closed");
    },
  };
  return client;
}
