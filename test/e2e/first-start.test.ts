import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { type FerryProcess, spawnFerry } from "../helpers/process.js";
import { httpCall } from "../helpers/server.js";

/**
 * What `ferry serve` prints for a person (src/cli/start-banner.ts, docs/operations.md "First start"): the real
 * compiled server on a fresh SQLite file, its stdout read as a person reads it, the printed curl run by a shell.
 */
const run = promisify(execFile);
const dirs: string[] = [];
const started: FerryProcess[] = [];
afterAll(async () => {
  // A failed assertion leaves its server running: stop it by its own pid.
  for (const f of started) if (f.child.exitCode === null && f.child.signalCode === null) await stopped(f);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<FerryProcess> {
  const ferry = await spawnFerry(env);
  started.push(ferry);
  return ferry;
}

async function stopped(ferry: FerryProcess): Promise<string> {
  ferry.child.kill("SIGTERM");
  await ferry.exited;
  return ferry.stdout();
}

describe("first start", () => {
  it("prints where it listens, the console, each credential with what it is for, and a curl that works as printed; later starts say when FERRY_TOKEN replaced the stored token", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ferry-first-start-"));
    dirs.push(dir);
    const env = { DATABASE_URL: `sqlite:${join(dir, "ferry.db")}` };

    const first = await start(env);
    const port = new URL(first.url).port;
    const out = first.stdout();
    expect(out).toContain(`is listening on 127.0.0.1:${port}, data in sqlite:${join(dir, "ferry.db")}`);
    expect(out).toContain(`Console:  http://127.0.0.1:${port}/console`);
    const token = /^ {2}FERRY_TOKEN=(\S+)\n {6}the messaging token: send "Authorization: Bearer <token>"/m.exec(out)?.[1];
    expect(token).toBeDefined();
    const readOnly = /^ {2}read-only token: (\S+)\n {6}for dashboards.*every write is refused \(403\)$/m.exec(out)?.[1];
    expect(readOnly).toBeDefined();
    expect(out).toMatch(/^ {2}FERRY_CURRENT_SIGNING_KEY=sig_\S+$/m);
    expect(out).toMatch(/^ {2}FERRY_NEXT_SIGNING_KEY=sig_\S+\n {6}your receivers check the Svc-Signature header/m);
    expect(out).toMatch(/^ {2}FERRY_ADMIN_API_KEY=\S+\n {6}the management API/m);
    // What the read-only token is said to be for is what it does.
    expect((await httpCall(first.url, "GET", "/v2/logs", {}, readOnly)).status).toBe(200);
    expect((await httpCall(first.url, "POST", "/v2/publish/https://example.com/x", { body: "x" }, readOnly)).status).toBe(403);

    // The curl, exactly as printed, through a shell: the message is accepted and its id comes back.
    const curl = /^ {2}(curl .*)$/m.exec(out)?.[1];
    expect(curl).toContain(`http://127.0.0.1:${port}/v2/publish/`);
    const answer = await run("sh", ["-c", curl!], { timeout: 15_000 });
    const { messageId } = JSON.parse(answer.stdout) as { messageId: string };
    expect(messageId).toMatch(/^msg_/);
    // ... and delivered, to Ferry's own /health, with no other server.
    await eventually(async () => {
      const events = (await httpCall(first.url, "GET", `/v2/events?messageId=${messageId}`, {}, token)).json as {
        events: { state: string }[];
      };
      expect(events.events.map((e) => e.state)).toContain("DELIVERED");
    }, 15_000);
    await stopped(first);

    // A later start with the same database: nothing generated, nothing printed for a person.
    const second = await start(env);
    const again = await stopped(second);
    expect(again).not.toContain("First start");
    expect(again).not.toContain(token!);
    expect(again).not.toContain("replaced");

    // FERRY_TOKEN now differs from the stored token: it replaces it, and the start says so.
    const third = await start({ ...env, FERRY_TOKEN: "a-new-token-0123456789" });
    expect(third.stdout()).toContain(
      "FERRY_TOKEN replaced the messaging token stored in the database: the previous token no longer works.",
    );
    expect(third.stdout()).toMatch(/"replaced":\["FERRY_TOKEN"\].*"msg":"stored credentials replaced from the environment"/);
    expect((await httpCall(third.url, "GET", "/v2/logs", {}, token)).status).toBe(401);
    expect((await httpCall(third.url, "GET", "/v2/logs", {}, "a-new-token-0123456789")).status).toBe(200);
    expect(await stopped(third)).not.toContain("a-new-token-0123456789");
  }, 60_000);
});
