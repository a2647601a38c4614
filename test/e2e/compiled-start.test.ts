import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { httpCall, TEST_TOKEN } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * `npm start` from a clean clone: it builds dist/ itself (nothing is built in a fresh clone) and runs the compiled
 * JavaScript. The clone's node_modules holds every installed package EXCEPT tsx, so Ferry cannot load a TypeScript
 * transpiler at run time even by accident: if anything tried, the start would fail.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "ferry-clone-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A clone of this checkout's committed HEAD; a copy of the tree (without build output) when it is not a git checkout. */
function cleanClone(target: string): void {
  const git = spawnSync("git", ["clone", "--quiet", root, target], { stdio: "ignore" });
  if (git.status === 0) return;
  const skip = new Set(["node_modules", "dist", "data", ".git", ".ferry-dev"]);
  cpSync(root, target, { recursive: true, filter: (src) => !skip.has(relative(root, src).split("/")[0]!) });
}

/** node_modules of symlinks to the installed packages, minus tsx (and the .bin shims, which `npm start` does not use). */
function modulesWithoutTsx(target: string): void {
  const installed = join(root, "node_modules");
  mkdirSync(join(target, "node_modules"));
  for (const name of readdirSync(installed)) {
    if (name === "tsx" || name === ".bin") continue;
    symlinkSync(join(installed, name), join(target, "node_modules", name));
  }
}

describe("npm start from a clean clone", () => {
  it("builds dist/, then runs the compiled code without tsx", async () => {
    const clone = join(scratch, "ferry");
    cleanClone(clone);
    modulesWithoutTsx(clone);
    expect(existsSync(join(clone, "dist"))).toBe(false);
    // The setup really hides tsx: importing it from the clone fails.
    const probe = spawnSync(process.execPath, ["--input-type=module", "-e", "await import('tsx')"], { cwd: clone });
    expect(probe.status).not.toBe(0);

    const child = spawn("npm", ["start", "--silent"], {
      cwd: clone,
      detached: true, // its own process group: npm, sh and node are stopped together, by this group's id
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? scratch,
        FERRY_PORT: "0",
        FERRY_HOST: "127.0.0.1",
        FERRY_TOKEN: TEST_TOKEN,
        DATABASE_URL: `sqlite:${join(scratch, "ferry.db")}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const receiver = await Receiver.start();
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const url = await waitUntil(() => /"url":"(http:\/\/[^"]+)".*"msg":"ferry listening"/.exec(out)?.[1], {
        timeoutMs: 240_000,
        everyMs: 100,
        what: `ferry listening (stderr: ${err})`,
      });
      expect(err).toContain("dist/ is missing or older than src/; building it");
      expect(existsSync(join(clone, "dist", "main.js"))).toBe(true);
      expect(existsSync(join(clone, "dist", "store", "sqlite", "migrations", "001_core.sql"))).toBe(true);
      expect((await httpCall(url, "GET", "/ready")).status).toBe(200);
      expect((await httpCall(url, "GET", "/v2/keys", {}, TEST_TOKEN)).status).toBe(200);
      // A delivery goes out through the compiled egress thread (dist/delivery/egress-thread/worker.js), signed.
      const published = await httpCall(url, "POST", `/v2/publish/${receiver.url("/compiled")}`, { body: "hi" }, TEST_TOKEN);
      const got = await receiver.next({ timeoutMs: 20_000 });
      expect(got.headers["svc-message-id"]).toBe(published.json.messageId);
      expect(got.headers["svc-signature"]).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    } finally {
      if (child.exitCode === null) process.kill(-child.pid!, "SIGTERM");
      await exited;
      await receiver.close();
    }
  }, 300_000);
});
