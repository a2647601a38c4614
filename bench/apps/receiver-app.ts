import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  DELAY_HEADER,
  noCounts,
  nowMs,
  type ReceiverReply,
  type ReceiverRequest,
  SENT_HEADER,
} from "../lib/receiver.js";

/**
 * The bench's destination, in a process of its own so that its CPU is measured apart from the generator's
 * (bench/lib/receiver.ts drives it over IPC). A bare node:http server on 127.0.0.1 that answers 200 at once, counts
 * arrivals (per path too, for fan-out), and records publish→arrival latency and lateness when the request carries
 * the bench headers. It keeps only numbers, never bodies.
 */

/** Ferry's message id on every delivery (neutral dialect), lower-cased as node:http gives it. */
const MESSAGE_ID_HEADER = "svc-message-id";

let counts = noCounts();
let trackMessageIds = false;
const seenIds = new Set<string>();
let waiters: { count: number; resolve: () => void }[] = [];

/** Arrivals that count towards a wait: distinct messages when ids are tracked (a duplicate is not progress). */
const arrived = (): number => (trackMessageIds ? counts.count - counts.duplicates : counts.count);

function handle(req: IncomingMessage, res: ServerResponse): void {
  // Drain the body without keeping it; answer when it has fully arrived, as a real endpoint would.
  req.on("data", () => {});
  req.on("end", () => {
    const at = nowMs();
    counts.count++;
    if (counts.firstAt === 0) counts.firstAt = at;
    counts.lastAt = at;
    const path = req.url ?? "/";
    counts.byPath[path] = (counts.byPath[path] ?? 0) + 1;
    const sent = req.headers[SENT_HEADER];
    if (typeof sent === "string") {
      const delay = req.headers[DELAY_HEADER];
      if (typeof delay === "string") counts.lateness.push(at - (Number(sent) + Number(delay)));
      else counts.latencies.push(at - Number(sent));
    }
    if (req.headers["svc-signature"] !== undefined) counts.signed++;
    const id = req.headers[MESSAGE_ID_HEADER];
    if (trackMessageIds && typeof id === "string") {
      if (seenIds.has(id)) counts.duplicates++;
      else seenIds.add(id);
    }
    res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
    res.end("ok");
    if (waiters.length > 0) {
      const ready = waiters.filter((w) => arrived() >= w.count);
      if (ready.length > 0) {
        waiters = waiters.filter((w) => arrived() < w.count);
        for (const w of ready) w.resolve();
      }
    }
  });
}

/** Resolves true once `count` arrivals are in, false after `timeoutMs`. */
function waitFor(count: number, timeoutMs: number): Promise<boolean> {
  if (arrived() >= count) return Promise.resolve(true);
  return new Promise((resolve) => {
    const waiter = {
      count,
      resolve: () => {
        clearTimeout(timer);
        resolve(true);
      },
    };
    const timer = setTimeout(() => {
      waiters = waiters.filter((w) => w !== waiter);
      resolve(false);
    }, timeoutMs);
    waiters.push(waiter);
  });
}

const reply = (message: ReceiverReply): void => {
  process.send!(message);
};

const server = createServer(handle);
server.keepAliveTimeout = 65_000;
server.headersTimeout = 70_000;
server.listen(0, "127.0.0.1", () => reply({ type: "ready", port: (server.address() as AddressInfo).port }));

process.on("message", (message: ReceiverRequest) => {
  switch (message.type) {
    case "reset":
      counts = noCounts();
      seenIds.clear();
      trackMessageIds = message.trackMessageIds;
      reply({ type: "done", id: message.id });
      return;
    case "wait":
      void waitFor(message.count, message.timeoutMs).then((ok) => reply({ type: "waited", id: message.id, ok, counts }));
      return;
    case "close":
      server.closeAllConnections();
      server.close(() => process.disconnect());
      return;
  }
});
// The bench went away (or closed us): nothing is left to receive for.
process.on("disconnect", () => process.exit(0));
