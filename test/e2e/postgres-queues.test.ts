import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FreshDatabase, freshDatabase, postgresAvailable } from "../helpers/postgres.js";
import { type Behavior, Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * FIFO queues with two Ferry nodes on one PostgreSQL database: both publish into the same queues and both deliver.
 * Order and parallelism are the store's rule (queue row locks, src/store/postgres/queues.ts), so they must hold
 * exactly whichever node claims.
 */
describe.runIf(postgresAvailable())("queues across two nodes on one PostgreSQL database", () => {
  let db: FreshDatabase;
  let receiver: Receiver;
  let nodes: TestServer[];

  beforeEach(async () => {
    db = await freshDatabase();
    receiver = await Receiver.start();
    nodes = [];
    for (let i = 0; i < 2; i++) nodes.push(await startTestServer({ env: { DATABASE_URL: db.url } }));
  });
  afterEach(async () => {
    for (const s of nodes) await s.stop();
    await receiver.close();
    await db.drop();
  });

  const json = (value: unknown) => ({ headers: { "content-type": "application/json" }, body: JSON.stringify(value) });
  const enqueue = (node: TestServer, queue: string, body: string, headers: Record<string, string> = {}) =>
    node.call("POST", `/v2/enqueue/${queue}/${receiver.url(`/${queue}`)}`, {
      headers: { "content-type": "text/plain", ...headers },
      body,
    });
  /** Samples which nodes have attempts in flight, to show that both deliver (not only that the order holds). */
  const watchDeliverers = () => {
    const seen = new Set<number>();
    const timer = setInterval(() => {
      nodes.forEach((n, i) => n.ferry.dispatcher.inFlightCount > 0 && seen.add(i));
    }, 1);
    return { stop: () => (clearInterval(timer), seen) };
  };
  const lag = async (queue: string) => (await nodes[0]!.call("GET", `/v2/queues/${queue}`)).json.lag as number;

  it("delivers 100 messages of a parallelism-1 queue published through both nodes strictly in order", async () => {
    // Every seventh attempt fails; its retry (delay 0) must come before the next message, whichever node claims it.
    let attempts = 0;
    for (let ok = 0; ok < 100; attempts++) if (attempts % 7 !== 3) ok++;
    receiver.respondWith(
      ...Array.from({ length: attempts }, (_, k): Behavior => ({ status: k % 7 === 3 ? 500 : 200, delayMs: 3 })),
    );
    const headers = { "svc-retries": "3", "svc-retry-delay": "0" };
    const deliverers = watchDeliverers();
    for (let i = 0; i < 100; i++) {
      const res = await enqueue(nodes[i % 2]!, "fifo", String(i), headers);
      expect(res.status).toBe(200);
    }
    const requests = await receiver.waitForCount(attempts, 60_000);
    const bodies = requests.map((r) => Number(r.text));
    expect(bodies.filter((_, k) => k % 7 !== 3)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    for (let k = 3; k < attempts - 1; k += 7) expect(bodies[k + 1]).toBe(bodies[k]);
    expect(receiver.maxConcurrent).toBe(1);
    expect([...deliverers.stop()].sort()).toEqual([0, 1]);
    await receiver.expectQuiet(200);
    expect(receiver.requests).toHaveLength(attempts); // no duplicate delivery
    await waitUntil(async () => (await lag("fifo")) === 0, { what: "lag 0" });
  }, 90_000);

  it("keeps arrival order when both nodes publish into one queue at the same time", async () => {
    receiver.setDefault({ status: 200, delayMs: 2 });
    const publisher = async (node: TestServer, name: string) => {
      for (let i = 0; i < 40; i++) expect((await enqueue(node, "mixed", `${name}-${i}`)).status).toBe(200);
    };
    await Promise.all([publisher(nodes[0]!, "a"), publisher(nodes[1]!, "b")]);
    const requests = await receiver.waitForCount(80, 60_000);
    // The order the database accepted them in (their CREATED log entries, oldest first) is the delivery order.
    const logs = await nodes[1]!.call("GET", "/v2/logs?queueName=mixed&state=CREATED&order=earliestFirst&count=1000");
    expect(requests.map((r) => r.headers["svc-message-id"])).toEqual(
      logs.json.logs.map((l: { messageId: string }) => l.messageId),
    );
    // And each node's publishes arrive in the order that node acknowledged them.
    for (const name of ["a", "b"]) {
      const mine = requests.map((r) => r.text).filter((t) => t.startsWith(`${name}-`));
      expect(mine).toEqual(Array.from({ length: 40 }, (_, i) => `${name}-${i}`));
    }
    expect(receiver.maxConcurrent).toBe(1);
  }, 90_000);

  it("never runs more than 3 messages of a parallelism-3 queue at once across both nodes", async () => {
    receiver.setDefault({ status: 200, delayMs: 60 });
    expect((await nodes[1]!.call("POST", "/v2/queues", json({ queueName: "wide", parallelism: 3 }))).status).toBe(200);
    // Enqueued while paused, so the backlog is there when it resumes and three can start together, however slowly
    // a busy machine serves the enqueues one by one.
    expect((await nodes[1]!.call("POST", "/v2/queues/wide/pause")).status).toBe(200);
    const deliverers = watchDeliverers();
    for (let i = 0; i < 30; i++) expect((await enqueue(nodes[i % 2]!, "wide", String(i))).status).toBe(200);
    expect((await nodes[0]!.call("POST", "/v2/queues/wide/resume")).status).toBe(200);
    const got = await receiver.waitForCount(30, 60_000);
    expect([...deliverers.stop()].sort()).toEqual([0, 1]);
    expect(new Set(got.map((r) => r.text)).size).toBe(30);
    expect(receiver.maxConcurrent).toBe(3);
    await waitUntil(async () => (await lag("wide")) === 0, { what: "lag 0" });
  }, 90_000);
});
