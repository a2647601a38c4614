import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/postgres.js";
import { type FerryProcess, runFerry, spawnFerry } from "../helpers/process.js";
import { Receiver } from "../helpers/receiver.js";
import { httpCall, startTestServer, TEST_TOKEN } from "../helpers/server.js";

/**
 * One Ferry process per SQLite file (issue 26, item 4; src/store/sqlite/process-lock.ts): a second `ferry serve` or
 * `ferry dev` on the same file refuses to start naming the file and the holder's pid, the first keeps working, and a
 * holder killed with SIGKILL leaves nothing that blocks the restart. SQLite only: on PostgreSQL several processes
 * on one database are several nodes (docs/postgres.md).
 */
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
});

function stopOnCleanup(ferry: FerryProcess): void {
  cleanup.push(async () => {
    if (ferry.child.exitCode === null && ferry.child.signalCode === null) {
      ferry.child.kill("SIGKILL");
      await ferry.exited;
    }
  });
}

describe("one process per SQLite file", () => {
  it("refuses a second ferry serve, ferry dev and ferry dev --reset on the file naming it and the pid; the first keeps delivering; SIGKILL leaves no stale lock", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ferry-lock-"));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const receiver = await Receiver.start();
    cleanup.push(() => receiver.close());
    const file = join(dir, "ferry.db");
    const env = { DATABASE_URL: `sqlite:${file}`, FERRY_TOKEN: TEST_TOKEN };
    const first = await spawnFerry(env);
    stopOnCleanup(first);

    const second = await runFerry(["serve"], { ...env, FERRY_PORT: "0", FERRY_HOST: "127.0.0.1" });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`the SQLite database ${file} is in use by another Ferry process (pid ${first.child.pid} on `);
    expect(second.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace

    const dev = await runFerry(["dev", "--data", dir, "--port", String(await freePort())], {});
    expect(dev.code).toBe(1);
    expect(dev.stderr).toContain(`the SQLite database ${file} is in use by another Ferry process (pid ${first.child.pid} on `);

    // --reset would delete the running server's files: refused before anything is deleted.
    const reset = await runFerry(["dev", "--data", dir, "--reset", "--port", String(await freePort())], {});
    expect(reset.code).toBe(1);
    expect(reset.stderr).toContain(`the SQLite database ${file} is in use by another Ferry process (pid ${first.child.pid} on `);
    expect(existsSync(file)).toBe(true);

    // The first one never noticed: it answers and delivers.
    expect((await httpCall(first.url, "GET", "/ready")).status).toBe(200);
    const published = await httpCall(first.url, "POST", `/v2/publish/${receiver.url("/after-refusals")}`, { body: "x" }, TEST_TOKEN);
    expect(published.status).toBe(200);
    await receiver.waitForPath("/after-refusals");

    // SIGKILL: the kernel drops the lock with the process; the restart on the same file starts and delivers what
    // was acknowledged before the kill.
    const delayed = await httpCall(first.url, "POST", `/v2/publish/${receiver.url("/delayed-across-kill")}`, {
      body: "y",
      headers: { "svc-delay": "1s" },
    }, TEST_TOKEN);
    expect(delayed.status).toBe(200);
    first.child.kill("SIGKILL");
    await first.exited;
    const restarted = await spawnFerry(env);
    stopOnCleanup(restarted);
    await receiver.waitForPath("/delayed-across-kill", 30_000);
    restarted.child.kill("SIGTERM");
    expect(await restarted.exited).toBe(0);
  }, 120_000);

  it("in one process too: a second server on the file is refused until the first stops", async () => {
    const first = await startTestServer({ store: "sqlite" });
    let stopped = false;
    cleanup.push(async () => {
      if (!stopped) await first.stop();
    });
    const env = { DATABASE_URL: `sqlite:${join(first.dataDir, "ferry.db")}` };
    await expect(startTestServer({ env })).rejects.toThrow(/is in use by another Ferry process \(pid \d+ on /);
    await first.stop({ keepData: true });
    stopped = true;
    const next = await startTestServer({ env });
    cleanup.push(async () => {
      await next.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    });
    expect((await next.call("GET", "/ready")).status).toBe(200);
  });
});
