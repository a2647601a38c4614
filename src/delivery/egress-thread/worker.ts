import { parentPort, workerData } from "node:worker_threads";
import { parseEgressPolicy } from "../../domain/egress-policy.js";
import type { AttemptResponse } from "../../domain/message.js";
import { forTransfer, reviveBuffers } from "../../threads/wire.js";
import { createHttpClient, type SendParams } from "../http-client.js";
import type { FromEgressThread, ToEgressThread } from "./wire.js";

/**
 * The egress thread (docs/threading.md, "The egress thread"): signs and sends the requests the main thread posts,
 * over its own keep-alive Agent and under the same destination policy, and posts their responses back, those
 * finished in one turn together. It keeps no state beyond the Agent's connections: the main thread owns every
 * decision about the attempt (src/delivery/dispatcher.ts).
 */
const port = parentPort;
if (!port) throw new Error("the egress thread runs as a worker");
const { destinationAllow } = workerData as { destinationAllow?: string };
const http = createHttpClient({ egress: parseEgressPolicy(destinationAllow) });

let finished: [number, AttemptResponse][] = [];
let flushScheduled = false;

function answer(id: number, response: AttemptResponse): void {
  finished.push([id, response]);
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(() => {
    flushScheduled = false;
    const transfer: ArrayBuffer[] = [];
    const seen = new Map<Uint8Array, Uint8Array>();
    // What this thread answers it no longer uses: its bytes are moved, not copied.
    const answers = finished.map(([i, r]): [number, AttemptResponse] => [i, forTransfer(r, transfer, true, seen) as AttemptResponse]);
    finished = [];
    port!.postMessage({ answers } satisfies FromEgressThread, transfer);
  });
}

port.on("message", (message: ToEgressThread) => {
  if ("close" in message) {
    void http.close().finally(() => port!.postMessage({ closed: true } satisfies FromEgressThread));
    return;
  }
  // send() never rejects: every failure is an AttemptResponse with `error`.
  for (const [id, params] of message.sends) void http.send(reviveBuffers(params) as SendParams).then((r) => answer(id, r));
});
