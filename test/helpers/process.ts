import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { track } from "./leaks.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
/**
 * The compiled Ferry, as `npm start` runs it (bin/ferry.mjs imports dist/main.js), built once per run by
 * build-global-setup.ts. Not bin/ferry.mjs itself: a source file edited while the suite runs would make every
 * spawned process rebuild dist/ (compiled-start.test.ts covers the bin).
 */
export const FERRY_BIN = [join(root, "dist", "main.js")];

export interface FerryProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * Starts `ferry serve` as a real child process (for crash and signal tests) and resolves once it listens.
 * Only this process is ever signalled, by its own pid.
 */
export function spawnFerry(env: Record<string, string>, timeoutMs = 20_000): Promise<FerryProcess> {
  const child = spawn(process.execPath, [...FERRY_BIN, "serve"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", FERRY_PORT: "0", FERRY_HOST: "127.0.0.1", FERRY_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  track(`ferry process ${child.pid}`, () => child.exitCode === null && child.signalCode === null);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`ferry did not start in ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const match = /"url":"(http:\/\/[^"]+)".*"msg":"ferry listening"/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, stdout: () => out, stderr: () => err, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`ferry exited with ${code} before listening: ${err}${out}`));
    });
  });
}

/** Runs `ferry` to completion (config errors, CLI commands) and returns its exit code and output. */
export function runFerry(args: string[], env: Record<string, string>, timeoutMs = 20_000) {
  const child = spawn(process.execPath, [...FERRY_BIN, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
