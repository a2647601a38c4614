import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { findPgBin, type PgCluster, postgresAvailable, startCluster } from "../helpers/postgres.js";
import { type FerryProcess, spawnFerry } from "../helpers/process.js";
import { httpCall, startTestServer, TEST_TOKEN } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/** `/ready` (readiness) against a real Ferry: start, normal operation, a SIGTERM drain, a database that goes away. */
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ferry-ready-"));
  cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function stopOnCleanup(ferry: FerryProcess): void {
  cleanup.push(async () => {
    if (ferry.child.exitCode === null) {
      ferry.child.kill("SIGTERM");
      await ferry.exited;
    }
  });
}

describe("/ready", () => {
  it("answers 200 in normal operation while /health stays the liveness check", async () => {
    const server = await startTestServer();
    cleanup.push(() => server.stop());
    const ready = await httpCall(server.url, "GET", "/ready");
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: "ready" });
    expect((await httpCall(server.url, "GET", "/health")).json).toEqual({ status: "ok" });
  });

  it("answers 503 naming the migration when the database lacks one of this build's migrations", async () => {
    const dataDir = tempDir();
    const server = await startTestServer({ dataDir, store: "sqlite" });
    cleanup.push(() => server.stop({ keepData: true }));
    const db = new Database(join(dataDir, "ferry.db"));
    db.prepare("DELETE FROM schema_migrations WHERE name = ?").run("020_ops_gauges.sql");
    db.close();
    const res = await httpCall(server.url, "GET", "/ready");
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ status: "unavailable", reason: "store: migrations not applied: 020_ops_gauges.sql" });
    expect((await httpCall(server.url, "GET", "/health")).status).toBe(200);
  });

  it("turns 503 at once on SIGTERM while in-flight deliveries finish, then the process exits 0", async () => {
    // A destination that holds every request until the test releases it: the attempts are in flight for sure.
    const held: ServerResponse[] = [];
    const arrived: string[] = [];
    const destination = createHttpServer((req, res) => {
      arrived.push(req.url ?? "");
      held.push(res);
    });
    await new Promise<void>((resolve) => destination.listen(0, "127.0.0.1", resolve));
    cleanup.push(() => new Promise((resolve) => destination.close(resolve)));
    const target = (path: string) => `http://127.0.0.1:${(destination.address() as AddressInfo).port}${path}`;
    const dataDir = tempDir();
    const ferry = await spawnFerry({
      DATABASE_URL: `sqlite:${join(dataDir, "ferry.db")}`,
      FERRY_TOKEN: TEST_TOKEN,
      FERRY_SHUTDOWN_GRACE_MS: "60000",
    });
    stopOnCleanup(ferry);
    expect((await httpCall(ferry.url, "GET", "/ready")).status).toBe(200);
    for (const i of [1, 2, 3]) {
      const res = await httpCall(ferry.url, "POST", `/v2/publish/${target(`/slow/${i}`)}`, { body: `s${i}` }, TEST_TOKEN);
      expect(res.status).toBe(200);
    }
    await waitUntil(() => held.length === 3, { what: "three attempts in flight" });
    ferry.child.kill("SIGTERM");
    const draining = await waitUntil(
      async () => {
        const res = await httpCall(ferry.url, "GET", "/ready");
        return res.status === 200 ? undefined : res;
      },
      { what: "/ready to leave 200" },
    );
    expect(draining.status).toBe(503);
    expect(draining.json.reason).toMatch(/^draining/);
    // Still draining: the process waits for the three attempts (the grace period is a minute).
    expect(ferry.child.exitCode).toBeNull();
    for (const res of held) res.end("ok");
    expect(await ferry.exited).toBe(0);
    expect(arrived.sort()).toEqual(["/slow/1", "/slow/2", "/slow/3"]);
    // Their outcomes were recorded before the exit: a restart finds nothing left to deliver.
    const again = await spawnFerry({ DATABASE_URL: `sqlite:${join(dataDir, "ferry.db")}`, FERRY_TOKEN: TEST_TOKEN });
    stopOnCleanup(again);
    const gauges = await httpCall(again.url, "GET", "/metrics");
    expect(gauges.text).toMatch(/^ferry_messages\{state="pending"\} 0$/m);
    expect(gauges.text).toMatch(/^ferry_messages\{state="active"\} 0$/m);
  }, 60_000);

  describe.runIf(postgresAvailable() && findPgBin() !== undefined)("on PostgreSQL (its own cluster)", () => {
    let cluster: PgCluster;

    it("answers 503 'starting' while the database is down at start, 200 once up, 503 when it stops, 200 again", async () => {
      cluster = await startCluster();
      cleanup.push(() => cluster.destroy());
      await cluster.stop();
      const port = await freePort();
      const starting = spawnFerry({ DATABASE_URL: cluster.adminUrl, FERRY_TOKEN: TEST_TOKEN, FERRY_PORT: String(port) }, 60_000);
      starting.then(stopOnCleanup, () => {});
      const base = `http://127.0.0.1:${port}`;
      const boot = await waitUntil(
        async () => {
          try {
            return await httpCall(base, "GET", "/ready");
          } catch {
            return undefined; // not listening yet
          }
        },
        { what: "the boot listener" },
      );
      expect(boot.status).toBe(503);
      expect(boot.json).toEqual({ status: "unavailable", reason: "starting", error: expect.stringMatching(/starting/) });
      expect(boot.headers["retry-after"]).toBe("1");
      // Not 200 while the store is unreachable at start: the process cannot serve anything yet.
      const health = await httpCall(base, "GET", "/health");
      expect(health.status).toBe(503);
      expect(health.json.reason).toBe("starting");

      await cluster.start();
      const ferry = await starting;
      await eventually(async () => expect((await httpCall(ferry.url, "GET", "/ready")).status).toBe(200), 20_000);

      await cluster.stop();
      const down = await eventually(async () => {
        const res = await httpCall(ferry.url, "GET", "/ready");
        expect(res.status).toBe(503);
        return res;
      }, 20_000);
      expect(down.json.reason).toMatch(/^store: /);
      expect((await httpCall(ferry.url, "GET", "/health")).status).toBe(200);

      await cluster.start();
      await eventually(async () => expect((await httpCall(ferry.url, "GET", "/ready")).status).toBe(200), 30_000);
    }, 120_000);
  });
});
