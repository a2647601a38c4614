import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hangingDestination } from "../helpers/faulty-destinations.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer, testStore } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * A hung destination with a large due backlog does not stall the others (docs/reliability.md "Isolation", issue 26
 * item 14). 10,000 messages wait for a destination that accepts connections and never answers, far more than a
 * node holds waiting (4 × its delivery concurrency); their timeout (1 hour) is far beyond this test. Without the
 * claim skipping destinations at their share, the node's waiting room fills with the hung destination's attempts and
 * the claim, in due order, meets only its backlog: every other destination's message waits for those timeouts. With
 * it, the others arrive as on an idle node. The bound of 1 s sits between those two outcomes (tens of milliseconds
 * against an hour), so load on the machine cannot decide it. Runs on the store FERRY_TEST_STORE names.
 */
const BACKLOG = 10_000;
const BATCH = 100;
const OTHERS = 100;
const HUNG_TIMEOUT = "3600s";

let server: TestServer;
let hanging: Awaited<ReturnType<typeof hangingDestination>>;
let healthy: Receiver;

beforeAll(async () => {
  server = await startTestServer();
  hanging = await hangingDestination();
  healthy = await Receiver.start();
});
afterAll(async () => {
  await hanging?.close();
  await healthy?.close();
  await server?.stop();
});

const publish = (url: string, headers: Record<string, string> = {}) =>
  server.call("POST", `/v2/publish/${url}`, { body: "other", headers });

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe(`a hung destination with ${BACKLOG} due messages (${testStore})`, () => {
  it("leaves other destinations' deliveries under 1 s at p99, by the fast path and by the claim", async () => {
    for (let i = 0; i < BACKLOG; i += BATCH) {
      const items = Array.from({ length: BATCH }, (_, k) => ({
        destination: `${hanging.url}/${i + k}`,
        headers: { "Svc-Timeout": HUNG_TIMEOUT },
        body: "stuck",
      }));
      const res = await server.call("POST", "/v2/batch", {
        headers: { "content-type": "application/json" },
        body: JSON.stringify(items),
      });
      expect(res.status).toBe(200);
    }
    await waitUntil(() => hanging.requests >= 64, { what: "the hung destination to hold its 64 requests" });

    // One at a time, so that each measures the path and not a queue of our own making. Half go by the publish fast
    // path; half carry a flow-control key, which never takes it: the claim leases them, walking past the hung
    // destination's due backlog.
    const sentAt = new Map<string, number>();
    for (let i = 0; i < OTHERS; i++) {
      const path = `/other/${i}`;
      sentAt.set(path, Date.now());
      const keyed = i % 2 === 1;
      const res = await publish(
        healthy.url(path),
        keyed ? { "Svc-Flow-Control-Key": "others", "Svc-Flow-Control-Value": "parallelism=100" } : {},
      );
      expect(res.status).toBe(200);
    }
    // Generous: the property is "arrives at once" against "waits an hour", not a speed.
    const received = await healthy.waitForCount(OTHERS, 30_000);
    const latencies = received.map((r) => r.arrivedAt - sentAt.get(r.url)!);
    expect(new Set(received.map((r) => r.url)).size).toBe(OTHERS);
    const p99 = percentile(latencies, 99);
    expect(p99, `p99 ${p99} ms, p50 ${percentile(latencies, 50)} ms`).toBeLessThan(1000);
    // The hung destination still holds exactly its bound: nothing was freed by a timeout meanwhile.
    expect(hanging.requests).toBe(64);
  }, 240_000);
});
