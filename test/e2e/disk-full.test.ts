import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * Disk full (docs/operations.md, "Disk full"): the SQLite database lives on a small tmpfs this test mounts (it needs
 * root, as CI runs; elsewhere the test is skipped and says why). A filler file takes the free space during load.
 */
function tryMount(dir: string, size: string): boolean {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

const mountDir = mkdtempSync(join(tmpdir(), "ferry-diskfull-"));
const mounted = process.getuid?.() === 0 && tryMount(mountDir, "24m");
if (!mounted) console.warn("disk-full test skipped: mounting a tmpfs needs root (CI runs as root)");

let server: TestServer;
let receiver: Receiver;
const filler = join(mountDir, "filler");

/** Writes zeros until the file system refuses (ENOSPC); returns the bytes written. */
function fillDisk(): number {
  const fd = openSync(filler, "a");
  const chunk = Buffer.alloc(64 * 1024);
  let written = 0;
  try {
    for (let i = 0; i < 10_000; i++) written += writeSync(fd, chunk);
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
  return written;
}

beforeAll(async () => {
  if (!mounted) return;
  receiver = await Receiver.start();
  server = await startTestServer({
    dataDir: join(mountDir, "data"),
    store: "sqlite",
    env: { FERRY_LEASE_MS: "2000", FERRY_POLL_INTERVAL_MS: "200" },
  });
}, 60_000);

afterAll(async () => {
  if (!mounted) return;
  await server?.stop().catch(() => {});
  await receiver?.close();
  execFileSync("umount", [mountDir]);
  rmdirSync(mountDir);
});

describe.runIf(mounted)("disk full on SQLite", () => {
  it("refuses publishes with 503 storage_full, loses nothing acknowledged, and recovers when space is freed", async () => {
    const acknowledged = new Set<string>();
    const statuses = new Map<number, number>();
    const body = "x".repeat(16 * 1024);
    let refusal: { text: string; retryAfter: unknown } | undefined;

    const publish = async (i: number) => {
      const res = await server.call("POST", `/v2/publish/${receiver.url(`/m${i}`)}`, { body });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 200) acknowledged.add(res.json.messageId as string);
      if (res.status === 503 && refusal === undefined) refusal = { text: res.text, retryAfter: res.headers["retry-after"] };
      return res.status;
    };

    // Load before, during and after the disk fills: 8 publishers at a time.
    let i = 0;
    for (; i < 80; i += 8) await Promise.all(Array.from({ length: 8 }, (_, k) => publish(i + k)));
    fillDisk();
    let refusedRounds = 0;
    for (let round = 0; round < 200 && refusedRounds < 3; round++, i += 8) {
      const got = await Promise.all(Array.from({ length: 8 }, (_, k) => publish(i + k)));
      if (got.every((s) => s === 503)) refusedRounds++;
    }

    expect(statuses.get(500) ?? 0, JSON.stringify([...statuses])).toBe(0);
    expect(refusedRounds, JSON.stringify([...statuses])).toBe(3);
    expect(refusal?.retryAfter).toBe("30");
    expect(JSON.parse(refusal!.text).error).toMatch(/storage is full/);

    // Messages stored before keep being delivered while the disk is full (outcomes may not be recordable yet).
    const deliveredIds = () => new Set(receiver.requests.map((r) => r.headers["svc-message-id"] as string));
    await waitUntil(() => [...acknowledged].every((id) => deliveredIds().has(id)), { timeoutMs: 30_000 });

    // Free the space: Ferry takes publishes again by itself, and every outcome gets recorded.
    rmSync(filler);
    await waitUntil(async () => (await publish(i++)) === 200, { timeoutMs: 30_000 });
    await waitUntil(() => [...acknowledged].every((id) => deliveredIds().has(id)), { timeoutMs: 30_000 });
    const logs = async (id: string) =>
      ((await server.call("GET", `/v2/logs?messageId=${id}`)).json.logs as { state: string }[]).map((l) => l.state);
    await waitUntil(
      async () => {
        for (const id of acknowledged) if (!(await logs(id)).includes("DELIVERED")) return false;
        return true;
      },
      { timeoutMs: 60_000 },
    );
    console.log(
      `disk full: ${acknowledged.size} acknowledged, all delivered; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
  }, 180_000);
});
