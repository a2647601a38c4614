import { createServer, connect, type Server, type Socket } from "node:net";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FerryProcess, spawnFerry } from "../helpers/process.js";
import { type FreshDatabase, freshDatabase, postgresAvailable } from "../helpers/postgres.js";
import { Receiver } from "../helpers/receiver.js";
import { metricValue, scrape } from "../helpers/metrics.js";
import { httpCall, TEST_TOKEN } from "../helpers/server.js";
import { writeFrame, writeHello } from "../../src/store/postgres/relay/frames.js";

/**
 * The write relay (docs/postgres.md "The write relay"): real Ferry processes on one real PostgreSQL database, a real
 * receiver, and, where a test breaks the link, a real TCP relay between a follower and the leader.
 */
describe.runIf(postgresAvailable())("the PostgreSQL write relay", () => {
  let db: FreshDatabase;
  let admin: pg.Client;
  let receiver: Receiver;
  const processes: FerryProcess[] = [];
  const proxies: Server[] = [];

  beforeEach(async () => {
    db = await freshDatabase();
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    for (const p of processes.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
      await p.exited;
    }
    for (const proxy of proxies.splice(0)) await new Promise((resolve) => proxy.close(resolve));
    await receiver.close();
    await admin.end();
    await db.drop();
  });

  const node = async (env: Record<string, string> = {}) => {
    const p = await spawnFerry({ DATABASE_URL: db.url, FERRY_TOKEN: TEST_TOKEN, ...env });
    processes.push(p);
    return p;
  };
  const publish = (p: FerryProcess, path: string, body: string) =>
    httpCall(p.url, "POST", `/v2/publish/${receiver.url(path)}`, { body }, TEST_TOKEN);
  const leaderRow = async () =>
    (await admin.query<{ address: string; port: number; node: string }>("SELECT address, port, node FROM relay_leader"))
      .rows[0];
  const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const metric = async (p: FerryProcess, name: string, labels: Record<string, string>) =>
    metricValue(await scrape(p.url, TEST_TOKEN), name, labels);
  /**
   * Publishes through `p` one message at a time until one went through the relay (its link is up); returns how many
   * it published.
   */
  const linked = async (p: FerryProcess) => {
    let published = 0;
    await until("a publish through the relay", async () => {
      const res = await publish(p, "/warm", "warm");
      expect(res.status).toBe(200);
      published++;
      const n = await metric(p, "ferry_pg_relay_calls_total", { method: "messageInsertMany", written_by: "leader" });
      return n > 0 ? n : undefined;
    });
    return published;
  };
  const rowsOf = async (id: string) =>
    (await admin.query<{ n: string }>("SELECT count(*) AS n FROM messages WHERE id = $1", [id])).rows[0]!.n;

  it("a follower's plain publishes and outcomes are committed by the leader, and the follower delivers them", async () => {
    const a = await node();
    const row = await until("a leader", leaderRow);
    expect(row.node).toBe(`${row.node.split("/")[0]}/${a.child.pid}`);
    const b = await node();
    const warm = await linked(b);
    const relayedBefore = await metric(b, "ferry_pg_relay_calls_total", { written_by: "leader" , method: "messageInsertMany" });
    const before = await metric(a, "ferry_pg_relay_served_total", { method: "messageInsertMany" });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => publish(b, `/m/${i}`, `m${i}`)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const ids = results.map((r) => String(r.json.messageId));
    const got = await receiver.waitForCount(20 + warm, 15_000);
    const delivered = new Set(got.map((r) => String(r.headers["svc-message-id"])));
    for (const id of ids) expect(delivered.has(id)).toBe(true);
    // The leader's answer leaves the bodies out; the follower delivers its own.
    for (const r of got.filter((g) => g.url.startsWith("/m/"))) expect(r.text).toBe(`m${r.url.slice(3)}`);
    expect(got.filter((g) => g.url.startsWith("/m/"))).toHaveLength(20);
    // Every publish went through the leader's transactions, and came back to B to deliver.
    expect(await metric(b, "ferry_pg_relay_calls_total", { method: "messageInsertMany", written_by: "leader" })).toBe(
      relayedBefore + 20,
    );
    expect(await metric(a, "ferry_pg_relay_served_total", { method: "messageInsertMany" })).toBe(before + 20);
    expect(await metric(a, "ferry_deliveries_total", { outcome: "delivered" })).toBe(0);
    await until("B's outcomes, through the leader", async () => {
      const n = await metric(b, "ferry_pg_relay_calls_total", { method: "messageFinish", written_by: "leader" });
      return n >= relayedBefore + 20 ? n : undefined;
    });
    const states = await admin.query<{ state: string; n: string }>(
      "SELECT state, count(*) AS n FROM messages WHERE id = ANY($1) GROUP BY state",
      [ids],
    );
    expect(states.rows).toEqual([{ state: "DELIVERED", n: "20" }]);
    expect(await metric(b, "ferry_pg_relay_calls_total", { method: "messageInsertMany", written_by: "self_after_loss" })).toBe(0);
  });

  /**
   * A TCP relay between the follower and the leader that loses the link at the first call: `answer` lets the call
   * reach the leader and drops its answer; `call` drops the call itself (either way the follower sees the link
   * close); `answer, link kept` drops the answer and keeps the link open, as a leader that hangs: the follower gives
   * up after 10 s without an answer.
   */
  const lossyLink = async (to: { address: string; port: number }, lose: "answer" | "call" | "answer, link kept") => {
    const sockets = new Set<Socket>();
    let onConnection = () => {};
    const connected = new Promise<void>((resolve) => {
      onConnection = resolve;
    });
    const server = createServer((client) => {
      onConnection();
      const leader = connect({ host: to.address, port: to.port });
      sockets.add(client).add(leader);
      const cut = () => {
        client.destroy();
        leader.destroy();
      };
      let frames = 0;
      client.on("data", (chunk: Buffer) => {
        frames++;
        // The first write is the hello; the ones after it carry calls.
        if (lose === "call" && frames > 1) cut();
        else leader.write(chunk);
      });
      // The leader only ever sends answers: dropped, and the link cut, or kept open as if the leader hung.
      leader.on("data", () => {
        if (lose !== "answer, link kept") cut();
      });
      client.on("error", cut);
      leader.on("error", cut);
      client.on("close", cut);
      leader.on("close", cut);
    });
    proxies.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { port: (server.address() as { port: number }).port, connected };
  };

  for (const lose of ["answer", "call", "answer, link kept"] as const) {
    const what = lose === "answer, link kept" ? "answer never came (the link kept open)" : `${lose} the link lost`;
    it(`a publish whose ${what} is written once, acknowledged and delivered`, { timeout: 40_000 }, async () => {
      await node();
      const row = await until("a leader", leaderRow);
      const link = await lossyLink(row, lose);
      // The followers connect where the row says: through the lossy link.
      await admin.query("UPDATE relay_leader SET port = $1", [link.port]);
      const b = await node();
      // B's link comes up with its first election check; until then it writes itself, as it does a publish that
      // does not take the fast path (a node's first ones may not). So B publishes until one went through the link.
      await link.connected;
      const ids: string[] = [];
      await until("a publish through the lossy link", async () => {
        const res = await publish(b, `/lost/${ids.length}`, "lost");
        expect(res.status).toBe(200);
        ids.push(String(res.json.messageId));
        const lost = await metric(b, "ferry_pg_relay_calls_total", {
          method: "messageInsertMany",
          written_by: "self_after_loss",
        });
        return lost > 0 ? lost : undefined;
      }, 30_000);
      // Each publish exists once and is delivered, the lost one too.
      for (const id of ids) expect(await rowsOf(id)).toBe("1");
      const got = await receiver.waitForCount(ids.length, 10_000);
      expect(new Set(got.map((r) => String(r.headers["svc-message-id"])))).toEqual(new Set(ids));
      await until("the deliveries recorded", async () => {
        const { rows } = await admin.query<{ n: string }>(
          "SELECT count(*) AS n FROM messages WHERE id = ANY($1) AND state = 'DELIVERED'",
          [ids],
        );
        return Number(rows[0]!.n) === ids.length ? true : undefined;
      });
    });
  }

  it("when the leader is killed (SIGKILL), another node leads and every acknowledged publish is delivered", async () => {
    const a = await node();
    await until("a leader", leaderRow);
    const b = await node();
    const c = await node();
    const warm = (await linked(b)) + (await linked(c));
    const acked = new Set<string>();
    let refused = 0;
    const send = async (through: FerryProcess, i: number) => {
      const res = await publish(through, `/k/${i}`, `k${i}`);
      if (res.status === 200) acked.add(String(res.json.messageId));
      else refused++;
    };
    // 300 publishes, 6 at a time, through the two followers; the leader dies a third of the way in.
    for (let i = 0; i < 300; i += 6) {
      if (i === 96) a.child.kill("SIGKILL");
      await Promise.all(Array.from({ length: 6 }, (_, k) => send(k % 2 === 0 ? b : c, i + k)));
    }
    await a.exited;
    expect(refused).toBe(0);
    expect(acked.size).toBe(300);
    const got = await receiver.waitForCount(300 + warm, 30_000);
    const delivered = new Set(got.map((r) => String(r.headers["svc-message-id"])));
    for (const id of acked) expect(delivered.has(id)).toBe(true);
    const row = await until("a new leader", async () => {
      const r = await leaderRow();
      return r !== undefined && !r.node.endsWith(`/${a.child.pid}`) ? r : undefined;
    });
    expect([`/${b.child.pid}`, `/${c.child.pid}`].some((pid) => row.node.endsWith(pid))).toBe(true);
  });

  for (const shown of ["not-the-secret", "x".repeat(300)]) {
    it(`the leader closes a connection whose hello is ${shown.length > 256 ? "too long" : "not the secret"}, and runs none of its calls`, async () => {
      await node();
      const row = await until("a leader", leaderRow);
      const before = await admin.query<{ n: string }>("SELECT count(*) AS n FROM messages");
      const socket = connect({ host: row.address, port: row.port });
      const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
      socket.on("error", () => {});
      let answered = false;
      socket.on("data", () => {
        answered = true;
      });
      writeHello(socket, shown);
      writeFrame(socket, [[1, "messageFinish", {}]]);
      await closed;
      expect(answered).toBe(false);
      expect((await admin.query<{ n: string }>("SELECT count(*) AS n FROM messages")).rows).toEqual(before.rows);
    });
  }

  it("with FERRY_PG_RELAY=off no node leads and every node commits its own writes", async () => {
    const a = await node({ FERRY_PG_RELAY: "off" });
    const res = await publish(a, "/off", "off");
    expect(res.status).toBe(200);
    await receiver.next({ timeoutMs: 10_000 });
    expect(await leaderRow()).toBeUndefined();
  });
});
