import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { runFerry, spawnFerry } from "../helpers/process.js";
import { Receiver } from "../helpers/receiver.js";
import { httpCall, startTestServer, TEST_TOKEN } from "../helpers/server.js";

let receiver: Receiver;
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "ferry-durability-"));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(async () => {
  await receiver.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const deliveredIds = (r: Receiver) => new Set(r.requests.map((q) => String(q.headers["svc-message-id"])));

describe("restart", () => {
  it("picks up pending, delayed and retrying messages after a restart", async () => {
    const clock = new OffsetClock();
    const first = await startTestServer({ clock });
    const r = await Receiver.start();
    r.respondWith({ status: 500 });
    const retrying = (await first.call("POST", `/v2/publish/${r.url("/retrying")}`, { body: "r" })).json.messageId;
    await r.next();
    const delayed = (
      await first.call("POST", `/v2/publish/${r.url("/delayed")}`, { headers: { "svc-delay": "1h" }, body: "d" })
    ).json.messageId;
    for (let i = 0; i < 100; i++) {
      const ev = await first.call("GET", `/v2/events?messageId=${retrying}&state=RETRY`);
      if (ev.json.events.length > 0) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    await first.stop({ keepData: true });

    clock.offsetMs += 2 * 3_600_000;
    const second = await startTestServer({ clock, dataDir: first.dataDir });
    await r.waitForCount(3);
    expect(deliveredIds(r)).toEqual(new Set([retrying, delayed]));
    await second.stop();
    await r.close();
  });

  it("loses no acknowledged message when killed with SIGKILL in the middle of a burst", async () => {
    const dataDir = tempDir();
    const env = {
      DATABASE_URL: `sqlite:${join(dataDir, "ferry.db")}`,
      FERRY_TOKEN: TEST_TOKEN,
      FERRY_LOG_LEVEL: "warn",
    };
    const r = await Receiver.start();
    r.setDefault({ status: 200, delayMs: 5 });
    let ferry = await spawnFerry({ ...env, FERRY_LOG_LEVEL: "info" });
    const acknowledged = new Set<string>();
    let stop = false;
    // Four publishers, each bounded to 2,000 publishes; the kill lands while they run.
    const publisher = async (n: number) => {
      for (let i = 0; i < 2000 && !stop; i++) {
        try {
          const res = await httpCall(
            ferry.url,
            "POST",
            `/v2/publish/${r.url(`/burst/${n}/${i}`)}`,
            { body: `m${n}-${i}` },
            TEST_TOKEN,
          );
          if (res.status === 200) acknowledged.add(res.json.messageId);
        } catch {
          return; // the server is gone: an unanswered publish was never acknowledged
        }
      }
    };
    const publishers = [0, 1, 2, 3].map(publisher);
    while (acknowledged.size < 300) await new Promise((res) => setTimeout(res, 10));
    ferry.child.kill("SIGKILL");
    stop = true;
    await Promise.all(publishers);
    await ferry.exited;

    ferry = await spawnFerry({ ...env, FERRY_LOG_LEVEL: "info" });
    const deadline = Date.now() + 20_000;
    let missing: string[] = [...acknowledged];
    while (missing.length > 0 && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 100));
      const seen = deliveredIds(r);
      missing = missing.filter((id) => !seen.has(id));
    }
    ferry.child.kill("SIGTERM");
    await ferry.exited;
    await r.close();
    expect(acknowledged.size).toBeGreaterThanOrEqual(300);
    expect(missing).toEqual([]);
  }, 60_000);

  it("on SIGTERM lets in-flight deliveries finish, then exits 0", async () => {
    const dataDir = tempDir();
    const r = await Receiver.start();
    r.setDefault({ status: 200, delayMs: 800 });
    const ferry = await spawnFerry({ DATABASE_URL: `sqlite:${join(dataDir, "ferry.db")}`, FERRY_TOKEN: TEST_TOKEN });
    const res = await httpCall(ferry.url, "POST", `/v2/publish/${r.url("/slow")}`, { body: "s" }, TEST_TOKEN);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the attempt is now in flight
    ferry.child.kill("SIGTERM");
    expect(await ferry.exited).toBe(0);
    expect(deliveredIds(r)).toEqual(new Set([res.json.messageId]));
    // The outcome was recorded before exit: a restart does not deliver it again.
    const again = await spawnFerry({ DATABASE_URL: `sqlite:${join(dataDir, "ferry.db")}`, FERRY_TOKEN: TEST_TOKEN });
    const states = (await httpCall(again.url, "GET", `/v2/events?messageId=${res.json.messageId}`, {}, TEST_TOKEN)).json
      .events;
    expect(states[0].state).toBe("DELIVERED");
    again.child.kill("SIGTERM");
    await again.exited;
    await r.close();
  }, 30_000);
});

describe("start-up", () => {
  it("stops with the variable's name on a bad configuration value", async () => {
    const res = await runFerry(["serve"], { FERRY_PORT: "not-a-port" });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("FERRY_PORT");
    const db = await runFerry(["serve"], { DATABASE_URL: "mysql://x" });
    expect(db.stderr).toContain("DATABASE_URL");
  });

  it("generates and prints the token and signing keys once, then reuses them", async () => {
    const dataDir = tempDir();
    const env = { DATABASE_URL: `sqlite:${join(dataDir, "ferry.db")}` };
    const first = await spawnFerry(env);
    const token = /FERRY_TOKEN=(\S+)/.exec(first.stdout())?.[1];
    expect(first.stdout()).toMatch(/FERRY_CURRENT_SIGNING_KEY=sig_/);
    expect(token).toBeDefined();
    expect((await httpCall(first.url, "GET", "/health", {})).json).toEqual({ status: "ok" });
    first.child.kill("SIGTERM");
    await first.exited;
    const second = await spawnFerry(env);
    expect(second.stdout()).not.toContain("FERRY_TOKEN=");
    expect((await httpCall(second.url, "GET", "/v2/keys", {}, token)).status).toBe(200);
    // The read-only token is printed next to it and reads, but is refused the signing keys.
    const readOnly = /read-only token[^:]*: (\S+)/.exec(first.stdout())?.[1];
    expect(readOnly).toBeDefined();
    expect((await httpCall(second.url, "GET", "/v2/queues", {}, readOnly)).status).toBe(200);
    expect((await httpCall(second.url, "GET", "/v2/keys", {}, readOnly)).status).toBe(403);
    second.child.kill("SIGTERM");
    await second.exited;
  }, 30_000);

  it("writes structured JSON logs that carry neither tokens, signing keys nor message bodies", async () => {
    const dataDir = tempDir();
    const r = await Receiver.start();
    r.respondWith({ status: 500, body: "receiver-secret-answer" });
    const ferry = await spawnFerry({
      DATABASE_URL: `sqlite:${join(dataDir, "ferry.db")}`,
      FERRY_TOKEN: TEST_TOKEN,
      FERRY_CURRENT_SIGNING_KEY: "sig_logCheckCurrentKey0000000000",
      FERRY_LOG_LEVEL: "trace",
    });
    const body = "body-secret-payload-42";
    await httpCall(ferry.url, "POST", `/v2/publish/${r.url("/log-check")}`, { body, headers: { "svc-retries": "1", "svc-retry-delay": "0" } }, TEST_TOKEN);
    await httpCall(ferry.url, "GET", "/v2/messages/msg_unknown", {}, "wrong-token-value");
    await r.waitForCount(2);
    ferry.child.kill("SIGTERM");
    await ferry.exited;
    await r.close();
    const output = ferry.stdout() + ferry.stderr();
    const lines = ferry.stdout().split("\n").filter((l) => l.startsWith("{"));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    for (const secret of [TEST_TOKEN, "sig_logCheckCurrentKey0000000000", body, "receiver-secret-answer", "wrong-token-value"]) {
      expect(output, secret).not.toContain(secret);
    }
  }, 30_000);
});
