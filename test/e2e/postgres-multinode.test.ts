import pg from "pg";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type FerryProcess, spawnFerry } from "../helpers/process.js";
import { type FreshDatabase, freshDatabase, postgresAvailable } from "../helpers/postgres.js";
import { Receiver } from "../helpers/receiver.js";
import { addCustomer, adminEnv, manage } from "../helpers/management.js";
import { verifySignature } from "../helpers/signature.js";
import {
  httpCall,
  startTestServer,
  TEST_CURRENT_KEY,
  TEST_NEXT_KEY,
  TEST_TOKEN,
  type TestServer,
} from "../helpers/server.js";

/** Several Ferry nodes on one PostgreSQL database. */
describe.runIf(postgresAvailable())("several nodes on one PostgreSQL database", () => {
  let db: FreshDatabase;
  let receiver: Receiver;
  const servers: TestServer[] = [];
  const processes: FerryProcess[] = [];

  beforeEach(async () => {
    db = await freshDatabase();
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    for (const p of processes.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
      await p.exited;
    }
    for (const s of servers.splice(0)) await s.stop();
    await receiver.close();
    await db.drop();
  });

  const node = async (env: Record<string, string> = {}) => {
    const server = await startTestServer({ env: { DATABASE_URL: db.url, ...env } });
    servers.push(server);
    return server;
  };

  /** Waits until `n` nodes LISTEN for due messages (their LISTEN connection is the last statement they ran). */
  const listening = async (n: number) => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      for (let i = 0; i < 200; i++) {
        const { rows } = await client.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN ferry_due'",
        );
        if (Number(rows[0]!.n) >= n) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`${n} LISTEN connections not seen within 5 s`);
    } finally {
      await client.end();
    }
  };

  it("a message published through one node is delivered by another at once (NOTIFY), not at its next poll", async () => {
    // A 60 s poll: only a NOTIFY can make B claim within the test's time.
    const a = await node({ FERRY_POLL_INTERVAL_MS: "60000" });
    const b = await node({ FERRY_POLL_INTERVAL_MS: "60000" });
    await listening(2);
    // A publishes but cannot deliver: its dispatcher is stopped, so the message is stored unleased and due now.
    await a.ferry.dispatcher.stop();
    const res = await a.call("POST", `/v2/publish/${receiver.url("/woken")}`, { body: "hello" });
    expect(res.status).toBe(200);
    const got = await receiver.next({ timeoutMs: 10_000 });
    expect(got.headers["svc-message-id"]).toBe(res.json.messageId);
    expect(b.ferry.dispatcher.owner).not.toBe(a.ferry.dispatcher.owner);
  });

  it("after its connections are cut (pg_terminate_backend), a node reconnects, LISTENs again and serves", async () => {
    const a = await node({ FERRY_POLL_INTERVAL_MS: "60000" });
    await node({ FERRY_POLL_INTERVAL_MS: "60000" });
    await listening(2);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid, 5000))::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    await admin.end();
    expect(rows[0]!.n).toBeGreaterThanOrEqual(2);
    // The terminated backends are gone (the call above waits for it); both LISTEN connections come back by
    // themselves (backoff from 100 ms).
    await listening(2);
    await a.ferry.dispatcher.stop();
    const res = await a.call("POST", `/v2/publish/${receiver.url("/after-cut")}`, { body: "again" });
    expect(res.status).toBe(200);
    expect((await receiver.next({ timeoutMs: 10_000 })).headers["svc-message-id"]).toBe(res.json.messageId);
  });

  it("a node killed with SIGKILL leaves leases another node takes over once they expire", async () => {
    const env = { FERRY_LEASE_MS: "2000" };
    const b = await node(env);
    const a = await spawnFerry({ DATABASE_URL: db.url, FERRY_TOKEN: TEST_TOKEN, ...env });
    processes.push(a);
    // A's attempts hang; once all five are in flight, A dies with its leases.
    receiver.respondWith(...Array.from({ length: 5 }, () => ({ status: 200, delayMs: 25_000 })));
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await httpCall(
        a.url,
        "POST",
        `/v2/publish/${receiver.url(`/kill/${i}`)}`,
        { body: `m${i}` },
        TEST_TOKEN,
      );
      expect(res.status).toBe(200);
      ids.add(res.json.messageId);
    }
    for (let i = 0; i < 400 && receiver.maxConcurrent < 5; i++) await new Promise((r) => setTimeout(r, 25));
    expect(receiver.maxConcurrent).toBe(5);
    a.child.kill("SIGKILL");
    await a.exited;
    // B's rescuer releases the expired leases (2 s) and B delivers them; the hung requests would only be recorded
    // after 25 s, so what arrives now is B's.
    const delivered = await receiver.waitForCount(5, 15_000);
    expect(new Set(delivered.map((r) => String(r.headers["svc-message-id"])))).toEqual(ids);
    for (const id of ids) {
      // The outcome is written just after the receiver answered.
      await vi.waitFor(
        async () => {
          const events = (await b.call("GET", `/v2/events?messageId=${id}&order=earliestFirst`)).json.events;
          expect(events.map((e: { state: string }) => e.state)).toEqual(["CREATED", "ACTIVE", "ACTIVE", "DELIVERED"]);
        },
        { timeout: 5000, interval: 25 },
      );
    }
  }, 40_000);

  it("a token rotated through one node is refused by every node at once, and the new one accepted", async () => {
    const a = await node(adminEnv);
    const b = await node(adminEnv);
    const customer = await addCustomer(a, "rotate-everywhere@test.local");
    const publishThrough = (server: TestServer, token: string) =>
      server.call("POST", `/v2/publish/${receiver.url("/rotated")}`, { token, body: "x" });
    expect((await publishThrough(b, customer.token)).status).toBe(200);
    const rotated = await manage(a, "POST", `/v2/msgsvc/rotate-token/${customer.accountId}`, {
      auth: customer.credentials,
    });
    expect(rotated.status).toBe(200);
    // B's very next request: refused, whether B's account cache heard of the rotation yet or not (the publish's
    // insert checks its token at COMMIT, docs/postgres.md "Tokens checked at commit").
    expect((await publishThrough(b, customer.token)).status).toBe(401);
    expect((await publishThrough(b, rotated.json.token)).status).toBe(200);
    expect((await publishThrough(a, customer.token)).status).toBe(401);
  });

  it("a publish authenticated from a stale account cache is refused at its COMMIT and writes nothing", async () => {
    const b = await node(adminEnv);
    const customer = await addCustomer(b, "stale-cache@test.local");
    const publish = (body: string) =>
      b.call("POST", `/v2/publish/${receiver.url("/stale")}`, { token: customer.token, body });
    expect((await publish("cached")).status).toBe(200); // B's account cache now holds the token
    await receiver.next({ timeoutMs: 10_000 });
    // The token changes with the accounts trigger off for this session: no NOTIFY, so B's cache keeps the old token,
    // as it does for the milliseconds before a rotation's NOTIFY reaches it.
    const sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    try {
      await sql.query("SET session_replication_role = replica");
      await sql.query("UPDATE accounts SET token = $1 WHERE id = $2", ["rotated-behind-the-cache", customer.accountId]);
      const refused = await publish("stale");
      expect(refused.status).toBe(401);
      expect(refused.json.error).toBe("invalid token");
      // A workflow run's first message writes its run beside its insert: its token is read again, not taken from
      // the cache (src/services/publish.ts).
      const url = receiver.url("/stale/wf");
      const workflow = await b.call("POST", `/v2/publish/${url}`, {
        token: customer.token,
        headers: { "Svc-Workflow-RunId": "wfr_stale", "Svc-Workflow-Init": "true", "Svc-Workflow-Url": url },
        body: "payload",
      });
      expect(workflow.status).toBe(401);
      const { rows } = await sql.query<{ n: string }>("SELECT count(*) AS n FROM messages WHERE account_id = $1", [
        customer.accountId,
      ]);
      expect(Number(rows[0]!.n)).toBe(1);
    } finally {
      await sql.end();
    }
    const fresh = { token: "rotated-behind-the-cache", body: "new" };
    expect((await b.call("POST", `/v2/publish/${receiver.url("/stale")}`, fresh)).status).toBe(200);
  });

  it("an account changed in the database by another tool reaches every node's account cache (NOTIFY ferry_accounts)", async () => {
    const a = await node();
    await node(); // B: it delivers what A publishes, with the signing key it keeps in its account cache

    await a.ferry.dispatcher.stop();
    const url = receiver.url("/cached");
    await a.call("POST", `/v2/publish/${url}`, { body: "before" });
    const before = await receiver.next({ timeoutMs: 10_000 });
    await verifySignature({ signature: before.headers["svc-signature"], key: TEST_CURRENT_KEY, url, body: before.body });
    // The CLI or an operator's SQL: no node made this write, only the trigger's NOTIFY tells them.
    const newKey = "sig_changedBehindFerry000000000";
    const sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    try {
      await sql.query("UPDATE accounts SET current_signing_key = $1", [newKey]);
    } finally {
      await sql.end();
    }
    // The notification reaches B moments after the COMMIT: publish until a delivery is signed with the new key
    // (bounded), and check that every later one is.
    await vi.waitFor(
      async () => {
        await a.call("POST", `/v2/publish/${url}`, { body: "after" });
        const got = await receiver.next({ timeoutMs: 10_000 });
        await verifySignature({ signature: got.headers["svc-signature"], key: newKey, url, body: got.body });
      },
      { timeout: 10_000, interval: 50 },
    );
    await a.call("POST", `/v2/publish/${url}`, { body: "later" });
    const later = await receiver.next({ timeoutMs: 10_000 });
    await verifySignature({ signature: later.headers["svc-signature"], key: newKey, url, body: later.body });
  });

  it("a key rotated through one node signs the next delivery of every node", async () => {
    const a = await node();
    const b = await node();
    const rotated = await a.call("POST", "/v2/keys/rotate");
    expect(rotated.json.current).toBe(TEST_NEXT_KEY);
    // B delivers (A cannot), with the key A just rotated in.
    await a.ferry.dispatcher.stop();
    const url = receiver.url("/signed");
    await a.call("POST", `/v2/publish/${url}`, { body: "signed" });
    const got = await receiver.next({ timeoutMs: 10_000 });
    await verifySignature({ signature: got.headers["svc-signature"], key: TEST_NEXT_KEY, url, body: got.body });
    expect((await b.call("GET", "/v2/keys")).json.current).toBe(TEST_NEXT_KEY);
  });
});
