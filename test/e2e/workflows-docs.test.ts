import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { startDev } from "../helpers/dev-process.js";

/**
 * docs/workflows.md's workflow app, as written, against `ferry dev`: the block is taken from the page itself and run
 * with node from the repository (so `@upstash/workflow` resolves), on free ports instead of 8080 and 3000.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const cleanup: string[] = [];
afterAll(() => {
  for (const p of cleanup) rmSync(p, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("docs/workflows.md", () => {
  it("its workflow app runs against ferry dev and prints the run's result", async () => {
    const page = readFileSync(join(root, "docs", "workflows.md"), "utf8");
    const block = /```js\n([\s\S]*?)```/.exec(page)?.[1];
    expect(block).toContain("serve(");
    const file = join(root, `.workflow-app-${process.pid}.mjs`);
    writeFileSync(file, block!);
    cleanup.push(file);
    const data = mkdtempSync(join(tmpdir(), "ferry-wf-dev-"));
    cleanup.push(data);
    const ferryPort = await freePort();
    const dev = await startDev(["--port", String(ferryPort), "--data", data], root);
    try {
      const appPort = await freePort();
      const child = spawn(process.execPath, [file], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", QSTASH_URL: `http://127.0.0.1:${ferryPort}`, PORT: String(appPort) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      clearTimeout(timer);
      expect(out).toContain('result {"total":15,"tax":3,"shipping":0,"confirmed":true}');
      expect(code).toBe(0);
    } finally {
      await dev.stop();
    }
  }, 90_000);
});
