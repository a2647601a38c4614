import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hangingDestination } from "../helpers/faulty-destinations.js";
import { type FreshDatabase, freshDatabase, postgresAvailable } from "../helpers/postgres.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer, testStore } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * A hung destination with a large due backlog does not stall the others (docs/reliability.md "Isolation", issue 26
 * item 14). 10,000 messages wait for a destination that accepts connections and never answers, far more than a
 * node holds waiting (4 × its delivery concurrency); their timeout (1 hour) is far beyond this test. Without the
 * claim's destination shares, the node's waiting room fills with the hung destination's attempts, claims stop, and
 * the rest of its backlog stands first in due order: every other destination's message waits for those timeouts.
 * With them, the claim walks past the hung destination's messages and the others arrive within a claim. The bound of
 * 1 s sits between those two outcomes (a few hundred milliseconds at most under heavy load, against an hour), so load
 * on the machine cannot decide it. One node on the store FERRY_TEST_STORE names; two nodes on PostgreSQL, each with
 * its own gate and its own shares.
 */
const BACKLOG = 10_000;
const BATCH = 100;
const OTHERS = 100;
const HUNG_TIMEOUT = "3600s";
/** FERRY_DESTINATION_CONCURRENCY's default: the requests one node holds open to the hung destination. */
const PER_NODE = 64;

let hanging: Awaited<ReturnType<typeof hangingDestination>>;
let healthy: Receiver;
const servers: TestServer[] = [];

beforeEach(async () => {
  hanging = await hangingDestination();
  healthy = await Receiver.start();
});
let db: FreshDatabase | undefined;
afterEach(async () => {
  // The hung destination first: a node stops once its attempts end (its grace does not cut them short).
  await hanging.close();
  await healthy.close();
  for (const s of servers.splice(0)) await s.stop();
  await db?.drop();
  db = undefined;
});

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The backlog goes through the first node; the other destination's messages through every node in turn. */
async function hungBacklogLeavesOthersOnTime(nodes: TestServer[]): Promise<void> {
  for (let i = 0; i < BACKLOG; i += BATCH) {
    const items = Array.from({ length: BATCH }, (_, k) => ({
      destination: `${hanging.url}/${i + k}`,
      headers: { "Svc-Timeout": HUNG_TIMEOUT },
      body: "stuck",
    }));
    const res = await nodes[0]!.call("POST", "/v2/batch", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify(items),
    });
    expect(res.status).toBe(200);
  }
  const held = PER_NODE * nodes.length;
  await waitUntil(() => hanging.requests >= held, { what: `the hung destination to hold ${held} requests` });

  // One at a time, so that each measures the path and not a queue of our own making. Half carry a flow-control key,
  // which never takes the publish fast path: a claim leases them, walking past the hung destination's due backlog.
  // The others take the fast path when the node has room for it (its waiting room may be full of hung attempts).
  const sentAt = new Map<string, number>();
  for (let i = 0; i < OTHERS; i++) {
    const path = `/other/${i}`;
    const keyed = i % 2 === 1;
    sentAt.set(path, Date.now());
    const res = await nodes[i % nodes.length]!.call("POST", `/v2/publish/${healthy.url(path)}`, {
      body: "other",
      headers: keyed ? { "Svc-Flow-Control-Key": "others", "Svc-Flow-Control-Value": "parallelism=100" } : {},
    });
    expect(res.status).toBe(200);
  }
  // Generous: the property is "arrives at once" against "waits an hour", not a speed.
  const received = await healthy.waitForCount(OTHERS, 30_000);
  expect(new Set(received.map((r) => r.url)).size).toBe(OTHERS);
  const latencies = received.map((r) => r.arrivedAt - sentAt.get(r.url)!);
  const p99 = percentile(latencies, 99);
  expect(p99, `p99 ${p99} ms, p50 ${percentile(latencies, 50)} ms`).toBeLessThan(1000);
  // The hung destination still holds exactly its bound per node: nothing was freed by a timeout meanwhile.
  expect(hanging.requests).toBe(held);
}

describe(`a hung destination with ${BACKLOG} due messages`, () => {
  it(`leaves other destinations' deliveries under 1 s at p99 (${testStore})`, async () => {
    servers.push(await startTestServer());
    await hungBacklogLeavesOthersOnTime(servers);
  }, 240_000);

  it.runIf(postgresAvailable())(
    "on two PostgreSQL nodes, each holds its own share and leaves the others under 1 s at p99",
    async () => {
      const database = await freshDatabase();
      db = database;
      for (let i = 0; i < 2; i++) servers.push(await startTestServer({ env: { DATABASE_URL: database.url } }));
      await hungBacklogLeavesOthersOnTime(servers);
    },
    240_000,
  );
});
