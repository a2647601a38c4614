import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { availableParallelism, loadavg, totalmem } from "node:os";

function cpuModel(): string {
  try {
    const info = readFileSync("/proc/cpuinfo", "utf8");
    return /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** A package's version from the checkout's node_modules, or from .tmp/bench-deps (peers installed on demand). */
function packageVersion(name: string): string {
  for (const dir of ["../../node_modules/", "../../.tmp/bench-deps/node_modules/"]) {
    try {
      const url = new URL(`${dir}${name}/package.json`, import.meta.url);
      return (JSON.parse(readFileSync(url, "utf8")) as { version: string }).version;
    } catch {
      // try the next place
    }
  }
  return "(not installed yet)";
}

/** What the results file says about the machine and the software versions the figures come from. */
export function describeMachine(): Record<string, string> {
  return {
    nproc: String(availableParallelism()),
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    "CPU model": cpuModel(),
    node: process.version,
    "load average at start": loadavg()
      .map((l) => l.toFixed(2))
      .join(" "),
    packages: ["fastify", "undici", "better-sqlite3", "autocannon", "bullmq", "ioredis", "pg-boss"]
      .map((p) => `${p} ${packageVersion(p)}`)
      .join(", "),
  };
}

/** Dirty and under-writeback page cache, in MiB (/proc/meminfo). */
function unwrittenMiB(): number {
  try {
    const info = readFileSync("/proc/meminfo", "utf8");
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(info)?.[1] ?? 0);
    return (kib("Dirty") + kib("Writeback")) / 1024;
  } catch {
    return 0;
  }
}

/**
 * Lets the files the previous scenario wrote reach the disk before the next one starts: `sync`, then until less than
 * 32 MiB of page cache is dirty (at most 30 s). Otherwise the kernel writes them back during the next scenario, and
 * its fsyncs wait for that: after p4 (a store of a million messages) pg1's PostgreSQL CPU per message measured 71 µs
 * and pg3's 146, against 54 and 100 in a run of the two alone minutes later. Returns the seconds it took.
 */
export async function settleDisk(): Promise<number> {
  const t0 = Date.now();
  await new Promise<void>((resolve) => {
    execFile("sync", { timeout: 60_000 }, () => resolve());
  });
  for (let i = 0; i < 300 && unwrittenMiB() >= 32; i++) await sleep(100);
  return (Date.now() - t0) / 1000;
}
