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

function packageVersion(name: string): string {
  try {
    const url = new URL(`../../node_modules/${name}/package.json`, import.meta.url);
    return (JSON.parse(readFileSync(url, "utf8")) as { version: string }).version;
  } catch {
    return "?";
  }
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
    packages: ["fastify", "undici", "better-sqlite3", "autocannon", "bullmq", "pg-boss"]
      .map((p) => `${p} ${packageVersion(p)}`)
      .join(", "),
  };
}
