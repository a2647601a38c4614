import { parentPort, workerData } from "node:worker_threads";
import type { Config } from "../../config.js";
import { createLogger } from "../../logger.js";
import { threadRegistry } from "../../metrics/registry.js";
import { openStore } from "../open.js";
import type { Store } from "../store.js";
import type { Answer, FromStoreThread, ToStoreThread } from "./wire.js";
import { errorToWire, forTransfer, reviveBuffers } from "../../threads/wire.js";

/**
 * The store thread (docs/threading.md): opens the configured adapter and runs the calls the main thread's proxy
 * posts. Calls of one batch are all started in the same turn, so the adapter's group commit sees them together;
 * their answers are gathered per turn and go back in one message.
 */
const port = parentPort;
if (!port) throw new Error("the store thread runs as a worker");
const config = (workerData as { config: Config }).config;
const log = createLogger(config.logLevel).child({ thread: "store" });

let pending: Answer[] = [];
let flushScheduled = false;

function post(message: FromStoreThread, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

function answer(a: Answer): void {
  pending.push(a);
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(() => {
    flushScheduled = false;
    const answers = pending;
    pending = [];
    const transfer: ArrayBuffer[] = [];
    const seen = new Map<Uint8Array, Uint8Array>();
    for (const a of answers) if (a[1]) a[2] = forTransfer(a[2], transfer, true, seen);
    try {
      post({ answers }, transfer);
    } catch {
      // An answer that cannot be cloned (a store bug: a class instance or function in a result) fails alone.
      for (const a of answers) {
        try {
          post({ answers: [a] });
        } catch (error) {
          log.error({ err: error, id: a[0] }, "a store answer could not cross to the main thread");
          post({ answers: [[a[0], false, errorToWire(error)]] });
        }
      }
    }
  });
}

async function main(): Promise<void> {
  let store: Store;
  try {
    store = await openStore(config, { log, serving: true });
  } catch (error) {
    post({ failed: errorToWire(error) });
    return;
  }
  const methods = store as unknown as Record<string, (params: unknown) => Promise<unknown>>;
  // Answered by the thread, not the adapter: this thread's own metrics (commit sizes and durations), which /metrics
  // merges with the main thread's (src/http/metrics-scrape.ts, docs/metrics.md).
  const threadMethods: Record<string, () => Promise<unknown>> = {
    metricsOfStoreThread: () => threadRegistry.getMetricsAsJSON(),
  };
  let unsubscribeDue: (() => void) | undefined;
  // Account changes made elsewhere (another node, the CLI) reach the main thread's cache as events.
  store.subscribeAccountChanges?.(() => post({ event: "accounts" }));

  port!.on("message", (message: ToStoreThread) => {
    if ("subscribeDue" in message) {
      unsubscribeDue?.();
      unsubscribeDue = message.subscribeDue ? store.subscribeDue?.(() => post({ event: "due" })) : undefined;
      return;
    }
    for (const [id, method, params] of message.calls) {
      let result: Promise<unknown>;
      try {
        const own = threadMethods[method];
        const fn = methods[method];
        if (own) result = own();
        else if (typeof fn !== "function") throw new Error(`the store has no method ${method}`);
        else result = Promise.resolve(fn.call(store, reviveBuffers(params)));
      } catch (error) {
        result = Promise.reject(error);
      }
      result.then(
        (value) => answer([id, true, value]),
        (error: unknown) => answer([id, false, errorToWire(error)]),
      );
    }
  });
  post({ ready: { capabilities: store.capabilities, subscribeDue: store.subscribeDue !== undefined } });
}

void main();
