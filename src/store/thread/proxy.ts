import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import type { Config } from "../../config.js";
import type { Store, StoreCapabilities } from "../store.js";
import type { Answer, Call, FromStoreThread, ToStoreThread } from "./wire.js";
import { errorFromWire, forTransfer, reviveBuffers } from "../../threads/wire.js";
import { workerEntry } from "../../threads/worker-entry.js";
import { timerDelay } from "../../domain/timers.js";

/** How many messages and calls went to the store thread: read by tests (one message per turn) and diagnostics. */
export interface StoreThreadStats {
  batches: number;
  calls: number;
}
const STATS = Symbol("storeThreadStats");

/** The traffic counters of a store opened by `openStoreThread` (undefined for any other store). */
export function storeThreadStats(store: Store): StoreThreadStats | undefined {
  return (store as unknown as Record<symbol, StoreThreadStats | undefined>)[STATS];
}

/**
 * While calls are already out in the store thread, new ones wait up to this long to go together. Waking a store
 * thread that sleeps (waiting for an fsync, or for work) costs the main thread tens of microseconds per
 * postMessage on a VM, far more than the message itself: holding calls briefly while answers are due anyway makes
 * one message carry many turns' calls. An answer that comes back sends what waits at once.
 */
const HOLD_MS = 1;

interface PendingCall {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Opens the store in its own thread and returns a `Store` that forwards every method to it (docs/threading.md).
 * Generic: any method name becomes a call, so a capability added to the adapters needs nothing here. Calls made in
 * one event-loop turn go out in one message, so the store thread's group commit sees them as one batch.
 */
export async function openStoreThread(config: Config, log: Logger): Promise<Store> {
  const { url, data } = workerEntry(import.meta.url);
  const worker = new Worker(url, { workerData: { ...data, config } });
  const pending = new Map<number, PendingCall>();
  const dueSubscribers = new Set<() => void>();
  const accountSubscribers = new Set<() => void>();
  let nextId = 1;
  let outbox: Call[] = [];
  let outboxTransfer: ArrayBuffer[] = [];
  let flushScheduled = false;
  let holdTimer: NodeJS.Timeout | undefined;
  let dead: Error | undefined;
  const stats: StoreThreadStats = { batches: 0, calls: 0 };

  const send = (message: ToStoreThread, transfer: ArrayBuffer[] = []) => worker.postMessage(message, transfer);
  /** Sends now when nothing is out in the store thread; otherwise within HOLD_MS, or sooner when answers arrive. */
  const flushSoon = () => {
    flushScheduled = false;
    if (outbox.length === 0) return;
    if (pending.size === outbox.length) flush();
    else holdTimer ??= setTimeout(flush, timerDelay(HOLD_MS));
  };
  const scheduleFlush = () => {
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(flushSoon);
  };
  const flush = () => {
    clearTimeout(holdTimer);
    holdTimer = undefined;
    const calls = outbox;
    const transfer = outboxTransfer;
    outbox = [];
    outboxTransfer = [];
    if (calls.length === 0) return;
    stats.batches++;
    stats.calls += calls.length;
    try {
      send({ calls }, transfer);
    } catch {
      // Something in the batch cannot be cloned (a function, a class instance): send the calls one by one so only
      // the culprit fails. (Its byte arrays were copies made for the transfer, so nothing was given away.)
      for (const c of calls) {
        try {
          send({ calls: [c] });
        } catch (error) {
          pending.get(c[0])?.reject(error);
          pending.delete(c[0]);
        }
      }
    }
  };
  const failAll = (error: Error) => {
    dead = error;
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };

  const ready = new Promise<{ capabilities: StoreCapabilities; subscribeDue: boolean }>((resolve, reject) => {
    worker.on("message", (message: FromStoreThread) => {
      if ("answers" in message) settle(message.answers);
      else if ("event" in message) {
        for (const s of message.event === "due" ? dueSubscribers : accountSubscribers) s();
      } else if ("ready" in message) {
        resolve(message.ready as { capabilities: StoreCapabilities; subscribeDue: boolean });
      } else reject(errorFromWire(message.failed));
    });
    worker.on("error", (error) => {
      log.error({ err: error }, "the store thread failed");
      reject(error);
      failAll(Object.assign(new Error(`the store thread failed: ${error.message}`), { unavailable: true }));
    });
    worker.on("exit", (code) => {
      const error = Object.assign(new Error(`the store thread exited (code ${code})`), { unavailable: true });
      reject(error);
      if (!dead) failAll(error);
    });
  });

  function settle(answers: Answer[]): void {
    for (const a of answers) {
      const p = pending.get(a[0]);
      if (!p) continue;
      pending.delete(a[0]);
      if (a[1]) p.resolve(reviveBuffers(a[2]));
      else p.reject(errorFromWire(a[2]));
    }
    // Calls held back (and those the answers' continuations make in this turn) go out now.
    if (outbox.length > 0) scheduleFlush();
  }

  function call(method: string, params: unknown): Promise<unknown> {
    if (dead) return Promise.reject(dead);
    return new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      outbox.push([id, method, forTransfer(params, outboxTransfer, false)]);
      scheduleFlush();
    });
  }

  const opened = await ready.catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });

  const target: Record<string | symbol, unknown> = {
    [STATS]: stats,
    capabilities: opened.capabilities,
    close: async () => {
      if (dead) return;
      try {
        await call("close", undefined);
      } finally {
        dead = new Error("the store is closed");
        await worker.terminate();
      }
    },
    subscribeAccountChanges: (onChange: () => void) => {
      accountSubscribers.add(onChange);
      return () => accountSubscribers.delete(onChange);
    },
  };
  // An optional method the adapter lacks must read as absent (`store.subscribeDue?.(…)`), not as a remote call.
  target.subscribeDue = undefined;
  if (opened.subscribeDue) {
    target.subscribeDue = (onDue: () => void) => {
      if (dueSubscribers.size === 0) send({ subscribeDue: true });
      dueSubscribers.add(onDue);
      return () => {
        dueSubscribers.delete(onDue);
        if (dueSubscribers.size === 0 && !dead) send({ subscribeDue: false });
      };
    };
  }
  return new Proxy(target, {
    get(t, name) {
      if (name in t || typeof name === "symbol") return t[name];
      // Not a thenable: `await openStoreThread()` must not take the proxy for a promise.
      if (name === "then" || name === "toJSON") return undefined;
      const method = (params: unknown) => call(name, params);
      t[name] = method;
      return method;
    },
  }) as unknown as Store;
}
