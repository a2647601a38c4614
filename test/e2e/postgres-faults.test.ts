import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FerryProcess, spawnFerry } from "../helpers/process.js";
import { findPgBin, type PgCluster, postgresAvailable, startCluster } from "../helpers/postgres.js";
import { Receiver } from "../helpers/receiver.js";
import { httpCall, TEST_TOKEN } from "../helpers/server.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * The database goes away in the middle of load. This file restarts its OWN cluster (the run's shared one serves
 * other files), and runs Ferry as a real process, so "never crashes, never exits" is observed from outside.
 */
describe.runIf(postgresAvailable() && findPgBin() !== undefined)("PostgreSQL restart under load", () => {
  let cluster: PgCluster;
  let receiver: Receiver;
  let ferry: FerryProcess;

  beforeAll(async () => {
    cluster = await startCluster();
    receiver = await Receiver.start();
    ferry = await spawnFerry({ DATABASE_URL: cluster.adminUrl, FERRY_TOKEN: TEST_TOKEN, FERRY_LEASE_MS: "2000" });
  });
  afterAll(async () => {
    if (ferry && ferry.child.exitCode === null) {
      ferry.child.kill("SIGTERM");
      await ferry.exited;
    }
    await receiver?.close();
    await cluster?.destroy();
  });

  it("answers 503 while the database is away, loses no acknowledged message, and recovers by itself", async () => {
    const acknowledged = new Set<string>();
    const unexpected: string[] = [];
    let unavailable = 0;
    let phase: "before" | "outage" | "after" = "before";
    let ackedAfterRestart = 0;
    let stop = false;

    const publisher = async (n: number) => {
      // Bounded: at most 3,000 publishes each, and the test stops them well before.
      for (let i = 0; i < 3000 && !stop; i++) {
        const res = await httpCall(
          ferry.url,
          "POST",
          `/v2/publish/${receiver.url(`/p/${n}/${i}`)}`,
          { body: `${n}-${i}` },
          TEST_TOKEN,
        );
        if (res.status === 200) {
          acknowledged.add(res.json.messageId);
          if (phase === "after") ackedAfterRestart++;
        } else if (res.status === 503 && res.json?.error === "storage unavailable, retry shortly") {
          unavailable++;
          await sleep(20);
        } else unexpected.push(`${res.status} ${res.text}`);
      }
    };
    const publishers = [0, 1, 2, 3].map(publisher);

    await until(() => acknowledged.size >= 200, 20_000, "200 acknowledged publishes");
    await cluster.stop(); // pg_ctl stop -m fast: every connection is cut
    phase = "outage";
    await until(() => unavailable >= 20, 10_000, "503 answers during the outage");
    expect((await httpCall(ferry.url, "GET", "/health")).status).toBe(200);
    await cluster.start();
    phase = "after";
    await until(() => ackedAfterRestart >= 200, 30_000, "publishes to succeed again after the restart");
    stop = true;
    await Promise.all(publishers);

    // Every acknowledged message arrives (at least once: an outcome lost with the database is delivered again).
    const delivered = () => new Set(receiver.requests.map((r) => String(r.headers["svc-message-id"])));
    await until(() => [...acknowledged].every((id) => delivered().has(id)), 30_000, "every acknowledged delivery");
    expect(unexpected).toEqual([]);
    expect(ferry.child.exitCode).toBeNull();
    expect(ferry.child.signalCode).toBeNull();
    expect(ferry.stderr()).not.toMatch(/unhandled|uncaught/i);
  }, 90_000);
});
