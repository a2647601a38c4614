import { readFileSync } from "node:fs";
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
