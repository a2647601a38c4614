import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { type FerryProcess, spawnFerry } from "../helpers/process.js";
import { scratchDatabases } from "../helpers/scratch-database.js";
import { httpCall, TEST_TOKEN, testStore } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * SIGTERM keeps its grace (issue 26, item 3; src/delivery/dispatcher.ts, stop): deliveries still in flight when
 * FERRY_SHUTDOWN_GRACE_MS ends are abandoned, logged, and delivered again after the restart.
 */
const { cleanup, databaseUrl } = scratchDatabases("ferry-shutdown-");

function stopOnCleanup(ferry: FerryProcess): void {
  cleanup.push(async () => {
    if (ferry.child.exitCode === null && ferry.child.signalCode === null) {
      ferry.child.kill("SIGKILL");
      await ferry.exited;
    }
  });
}

interface Arrival {
  path: string;
  messageId: string;
  retried: string;
  res: ServerResponse;
}

describe(`SIGTERM on ${testStore}`, () => {
  it("abandons what is still in flight when the grace ends, exits 0, logs it, and delivers it again after the restart", async () => {
    // Holds every answer until told otherwise: far longer than the grace.
    let hold = true;
    const arrivals: Arrival[] = [];
    const receiver = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      arrivals.push({
        path: req.url ?? "",
        messageId: String(req.headers["svc-message-id"]),
        retried: String(req.headers["svc-retried"]),
        res,
      });
      if (!hold) res.end("ok");
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    cleanup.push(
      () =>
        new Promise((resolve) => {
          receiver.closeAllConnections();
          receiver.close(resolve);
        }),
    );
    const target = (path: string) => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${path}`;
    const env = { DATABASE_URL: await databaseUrl(), FERRY_TOKEN: TEST_TOKEN, FERRY_SHUTDOWN_GRACE_MS: "1000" };
    const ferry = await spawnFerry(env);
    stopOnCleanup(ferry);
    const ids: string[] = [];
    for (const i of [1, 2, 3]) {
      const res = await httpCall(ferry.url, "POST", `/v2/publish/${target(`/held/${i}`)}`, { body: `h${i}` }, TEST_TOKEN);
      expect(res.status).toBe(200);
      ids.push(res.json.messageId);
    }
    await waitUntil(() => arrivals.length === 3, { what: "three deliveries in flight" });

    ferry.child.kill("SIGTERM");
    // A bound, not a speed: the receiver would hold the answers for as long as the test runs.
    const exit = await Promise.race([
      ferry.exited,
      new Promise((resolve) => setTimeout(() => resolve("still running 30 s after SIGTERM with a 1 s grace"), 30_000)),
    ]);
    expect(exit).toBe(0);
    const line = ferry
      .stdout()
      .split("\n")
      .find((l) => l.includes("in-flight deliveries abandoned"));
    expect(line).toBeDefined();
    const logged = JSON.parse(line!) as { abandoned: number; messageIds: string[]; msg: string };
    expect(logged.abandoned).toBe(3);
    expect(logged.messageIds.sort()).toEqual([...ids].sort());
    expect(logged.msg).toMatch(/^shutdown grace of 1000 ms ended: 3 in-flight deliveries abandoned/);

    // After the restart each is delivered again, as a first attempt: abandoning is not a failed attempt.
    hold = false;
    const again = await spawnFerry(env);
    stopOnCleanup(again);
    const second = await waitUntil(() => (arrivals.length >= 6 ? arrivals.slice(3) : undefined), {
      what: "the three abandoned messages delivered again",
      timeoutMs: 30_000,
    });
    expect(second.map((a) => a.messageId).sort()).toEqual([...ids].sort());
    expect(second.map((a) => a.retried)).toEqual(["0", "0", "0"]);
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  }, 90_000);
});
