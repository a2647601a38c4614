import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FERRY_BIN } from "../helpers/process.js";
import { httpCall, TEST_TOKEN } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/** FERRY_LOG_FILE and SIGHUP, as logrotate uses them: move the file away, signal, and Ferry writes a new one. */
const dir = mkdtempSync(join(tmpdir(), "ferry-logfile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const read = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : "");

describe("FERRY_LOG_FILE", () => {
  it("logs to the file, and SIGHUP reopens it after it was moved away", async () => {
    const logFile = join(dir, "logs", "ferry.log");
    const child = spawn(process.execPath, [...FERRY_BIN, "serve"], {
      env: {
        PATH: process.env.PATH ?? "",
        FERRY_PORT: "0",
        FERRY_HOST: "127.0.0.1",
        FERRY_TOKEN: TEST_TOKEN,
        DATABASE_URL: `sqlite:${join(dir, "ferry.db")}`,
        FERRY_LOG_FILE: logFile,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const url = await waitUntil(() => /"url":"(http:\/\/[^"]+)".*"msg":"ferry listening"/.exec(read(logFile))?.[1], {
        timeoutMs: 30_000,
        what: "the listening line in the log file",
      });
      expect(stdout).not.toContain("ferry listening");

      renameSync(logFile, `${logFile}.1`);
      child.kill("SIGHUP");
      await waitUntil(() => read(logFile).includes('"msg":"logs reopened"'), { what: "a new log file" });
      expect(read(`${logFile}.1`)).toContain("ferry listening");
      expect(read(`${logFile}.1`)).not.toContain("logs reopened");
      // SIGHUP did not end the process.
      expect((await httpCall(url, "GET", "/health")).status).toBe(200);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(read(logFile)).toContain('"msg":"shutting down"');
    } finally {
      if (child.exitCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
    }
  }, 60_000);
});
