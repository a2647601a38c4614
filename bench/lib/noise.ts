import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { cpuSecondsOf } from "./proc.js";

const CLOCK_TICKS = 100; // USER_HZ

/** CPU seconds the whole machine spent busy (every state but idle and iowait), from /proc/stat. */
function machineBusySeconds(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / CLOCK_TICKS;
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8")
        .trim()
        .split(/\s+/)
        .filter((s) => s !== "")
        .map(Number),
    );
  } catch {
    return [];
  }
}

/** The bench's own processes: its descendants, and daemons started in its scratch directory (PostgreSQL). */
function ourPids(workDir: string): number[] {
  const roots = [process.pid];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(workDir)) roots.push(Number(entry));
    } catch {
      // gone
    }
  }
  const seen = new Set<number>();
  const stack = [...roots];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    stack.push(...childrenOf(pid));
  }
  return [...seen];
}

/**
 * How much CPU other programs took while a scenario ran: machine busy time minus the bench's own processes
 * (sampled every 500 ms, so a process that lives for less than that is counted as someone else's). On this shared
 * 2-core machine it says how far a scenario's figures were disturbed, better than the load average (which counts
 * the bench's own busy processes too).
 */
export class NoiseMeter {
  private readonly startedAt = Date.now();
  private readonly busyStart = machineBusySeconds();
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly workDir: string) {
    this.sample(true);
    this.timer = setInterval(() => this.sample(false), 500);
    this.timer.unref();
  }

  private sample(initial: boolean): void {
    for (const pid of ourPids(this.workDir)) {
      const cpu = pid === process.pid ? process.cpuUsage() : undefined;
      const seconds = cpu ? (cpu.user + cpu.system) / 1e6 : cpuSecondsOf(pid);
      if (!this.first.has(pid)) this.first.set(pid, initial ? seconds : 0);
      this.last.set(pid, seconds);
    }
  }

  /** Average cores used by the bench's processes and by everything else since construction. */
  stop(): { ours: number; others: number; cores: number } {
    this.sample(false);
    clearInterval(this.timer);
    const wall = Math.max(0.001, (Date.now() - this.startedAt) / 1000);
    let ours = 0;
    for (const [pid, last] of this.last) ours += last - (this.first.get(pid) ?? 0);
    const busy = machineBusySeconds() - this.busyStart;
    return { ours: ours / wall, others: Math.max(0, busy - ours) / wall, cores: availableParallelism() };
  }
}
