import { type ChildProcess, spawn } from "node:child_process";
import { track } from "./leaks.js";
import { FERRY_BIN } from "./process.js";

export interface DevProcess {
  child: ChildProcess;
  stdout: () => string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Runs `ferry dev <args>` in `cwd` and resolves once its banner is printed (it listens then). */
export function startDev(args: string[], cwd: string, timeoutMs = 30_000): Promise<DevProcess> {
  const child = spawn(process.execPath, [...FERRY_BIN, "dev", ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  track(`ferry dev process ${child.pid}`, () => child.exitCode === null && child.signalCode === null);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`ferry dev did not start in ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("Console: ")) {
        clearTimeout(timer);
        resolve({ child, stdout: () => out, exited, stop });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`ferry dev exited with ${code} before listening: ${err}${out}`));
    });
  });
}
