import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";

/** Root of the checkout (bench/lib/ → ../..), the working directory of every child process. */
export const repoRoot = new URL("../../", import.meta.url).pathname;

/** A free TCP port on 127.0.0.1 (bound and released; the short race is acceptable for a bench). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface Child {
  name: string;
  pid: number;
  process: ChildProcess;
  logPath: string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`; only this child's own pid is signalled. */
  stop(graceMs?: number): Promise<string>;
}

/**
 * Starts a child process whose stdout and stderr go to `logPath` (read on failure). The bench only ever signals the
 * pids it started, one by one.
 */
export function startChild(
  name: string,
  command: string,
  args: string[],
  opts: { env?: Record<string, string>; logPath: string; cwd?: string },
): Child {
  const fd = openSync(opts.logPath, "a");
  const child = spawn(command, args, {
    cwd: opts.cwd ?? repoRoot,
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", fd, fd],
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`${name}: spawn ${command} failed`);
  const pid = child.pid;
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ?? String(code)));
    child.once("error", (error) => resolve(`error: ${error.message}`));
  });
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    name,
    pid,
    process: child,
    logPath: opts.logPath,
    exited,
    stop: async (graceMs = 10_000) => {
      if (done) return exited;
      child.kill("SIGTERM");
      const result = await Promise.race([exited, sleep(graceMs).then(() => undefined)]);
      if (result !== undefined) return result;
      child.kill("SIGKILL");
      return exited;
    },
  };
}

/** `node --import tsx <file>`: how every TypeScript child (Ferry, the ceilings, the peers) is run. */
export function startNodeChild(
  name: string,
  file: string,
  opts: { env?: Record<string, string>; logPath: string; nodeArgs?: string[]; args?: string[]; cwd?: string },
): Child {
  return startChild(
    name,
    process.execPath,
    [...(opts.nodeArgs ?? []), "--import", "tsx", file, ...(opts.args ?? [])],
    opts,
  );
}

export function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Polls `url` until it answers 2xx (or a status `accept` takes), the child exits, or `timeoutMs` passes (bounded). */
export async function waitForHttp(
  url: string,
  child: Child | undefined,
  timeoutMs = 30_000,
  accept: (status: number) => boolean = (status) => status < 300,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: string | undefined;
  void child?.exited.then((code) => {
    exited = code;
  });
  while (Date.now() < deadline) {
    if (exited !== undefined) {
      throw new Error(`${child?.name} exited (${exited}) before it was ready:\n${tail(child!.logPath)}`);
    }
    try {
      const res = await request(url, { headersTimeout: 1000, bodyTimeout: 1000 });
      await res.body.dump();
      if (accept(res.statusCode)) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${child?.name ?? url} not ready after ${timeoutMs} ms${child ? `:\n${tail(child.logPath)}` : ""}`);
}

/** Peak resident set (VmHWM) and current RSS of a pid, in MiB, from /proc/<pid>/status. */
export function memoryOf(pid: number): { peakMiB: number; rssMiB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
    return { peakMiB: kb("VmHWM") / 1024, rssMiB: kb("VmRSS") / 1024 };
  } catch {
    return undefined;
  }
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a pid has used so far, from /proc/<pid>/stat; 0 once it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds used by this (bench) process. */
export function benchCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/**
 * Measures CPU seconds of a set of pids (and the bench itself) across a section of work. `pids` may be a function,
 * re-read at the end, for servers that fork workers during the run (PostgreSQL backends): new pids count from 0.
 */
export class CpuMeter {
  private readonly start: Map<number, number>;
  private readonly benchStart = benchCpuSeconds();

  constructor(private readonly pids: number[] | (() => number[])) {
    this.start = new Map(this.list().map((p) => [p, cpuSecondsOf(p)]));
  }

  private list(): number[] {
    return typeof this.pids === "function" ? this.pids() : this.pids;
  }

  /** CPU seconds used since construction: by the listed pids together, and by the bench process. */
  read(): { servers: number; bench: number } {
    let servers = 0;
    for (const pid of this.list()) servers += cpuSecondsOf(pid) - (this.start.get(pid) ?? 0);
    return { servers, bench: benchCpuSeconds() - this.benchStart };
  }
}

/** Runs a command to completion (bounded by `timeoutMs`), returning its exit code and output. */
export async function run(
  command: string,
  args: string[],
  opts: { timeoutMs?: number; env?: Record<string, string>; cwd?: string } = {},
): Promise<{ code: number; output: string }> {
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 120_000);
  const code = await new Promise<number>((resolve) => {
    child.once("exit", (c) => resolve(c ?? -1));
    child.once("error", () => resolve(-1));
  });
  clearTimeout(timer);
  return { code, output };
}
