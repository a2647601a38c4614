/**
 * P1 A/B under equal load: two Ferry servers (checkout A and checkout B, or one checkout under two environments)
 * run side by side, and rounds of P1's load (32 publishers, 1 KiB bodies, bench/README.md "Scenarios") alternate
 * between them, A, B, A, B …, so a change in how busy the machine is hits both alike. Prints each round and, per
 * side, the median delivered msg/s, CPU per message (the Ferry process, all its threads) and the main thread's CPU per
 * message, and B ÷ A of each.
 * On a machine shared with other work the absolute figures mean little; the ratio of the medians is the figure.
 *
 *   node --import tsx bench/ab-p1.ts [--a=<checkout A>] [--b=<checkout B>] [--rounds=5] [--messages=20000]
 *     [--a-env=NAME=value,…] [--b-env=NAME=value,…]
 *
 * `--a` and `--b` default to this checkout (then the environments make the difference). Neither side is built: both
 * run from source (`src/main.ts`), as `p1` does.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deliveryRun, type DeliveryRunResult } from "./lib/delivery-run.js";
import { type FerryProcess, publishRequest, setFerryRoot, startFerry } from "./lib/ferry.js";
import { makeBody } from "./lib/generator.js";
import { BenchReceiver } from "./lib/receiver.js";

const arg = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const envOf = (spec: string | undefined): Record<string, string> =>
  Object.fromEntries(
    (spec ?? "")
      .split(",")
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
  );
const here = new URL("../", import.meta.url).pathname;
const sides = [
  { name: "A", root: arg("a") ?? here, env: envOf(arg("a-env")) },
  { name: "B", root: arg("b") ?? here, env: envOf(arg("b-env")) },
];
const rounds = Number(arg("rounds") ?? "5");
const total = Number(arg("messages") ?? "20000");
/**
 * CPU seconds of one thread (utime + stime of /proc/<pid>/task/<tid>/stat, in clock ticks of 1/100 s): the main
 * thread's (tid = pid) is the figure that bounds P1 (docs/threading.md "Where the time goes").
 */
const threadCpuSeconds = (pid: number, tid: number): number => {
  const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const workDir = mkdtempSync(join(tmpdir(), "ferry-ab-p1-"));
const receiver = await BenchReceiver.start();
const servers: FerryProcess[] = [];
// Stopped from outside (Ctrl-C, kill): stop the servers this run started before exiting.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void Promise.all(servers.map((s) => s.stop())).finally(() => process.exit(1));
  });
}
try {
  for (const side of sides) {
    setFerryRoot(side.root);
    servers.push(await startFerry({ workDir, name: `p1-${side.name}`, env: side.env }));
  }
  const body = makeBody(1024);
  const load = { concurrency: 32, maxMs: 60_000, drainMs: 60_000 };
  const run = (ferry: FerryProcess, n: number) =>
    deliveryRun({
      origin: ferry.origin,
      receiver,
      serverPids: [ferry.child.pid],
      ...load,
      total: n,
      make: () => publishRequest(receiver.url("/p1"), body),
    });
  for (const ferry of servers) await run(ferry, 500); // warm-up
  const results: DeliveryRunResult[][] = [[], []];
  /** The main thread's CPU per message of each round, in µs. */
  const mainCpu: number[][] = [[], []];
  for (let r = 0; r < rounds; r++) {
    for (let s = 0; s < 2; s++) {
      const pid = servers[s]!.child.pid;
      const mainBefore = threadCpuSeconds(pid, pid);
      const res = await run(servers[s]!, total);
      const main = ((threadCpuSeconds(pid, pid) - mainBefore) / res.delivered) * 1e6;
      results[s]!.push(res);
      mainCpu[s]!.push(main);
      const cpu = (res.serverCpu / res.delivered) * 1e6;
      console.log(
        `round ${r + 1} ${sides[s]!.name}: ${res.deliveredPerSec.toFixed(0)} msg/s, ${cpu.toFixed(1)} µs/msg, main thread ${main.toFixed(1)} µs/msg; ${res.detail}`,
      );
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const rate = results.map((rs) => median(rs.map((r) => r.deliveredPerSec)));
  const cpu = results.map((rs) => median(rs.map((r) => (r.serverCpu / r.delivered) * 1e6)));
  const main = mainCpu.map(median);
  for (let s = 0; s < 2; s++) {
    console.log(
      `${sides[s]!.name} (${sides[s]!.root}${Object.keys(sides[s]!.env).length ? ` ${JSON.stringify(sides[s]!.env)}` : ""}): median ${rate[s]!.toFixed(0)} msg/s, ${cpu[s]!.toFixed(1)} µs/msg, main thread ${main[s]!.toFixed(1)} µs/msg`,
    );
  }
  console.log(
    `B ÷ A: ${(rate[1]! / rate[0]!).toFixed(3)}× msg/s, ${(cpu[1]! / cpu[0]!).toFixed(3)}× CPU/msg, ${(main[1]! / main[0]!).toFixed(3)}× main-thread CPU/msg`,
  );
  // When the machine's load drifts during the run, the medians of each side drift with it; the ratio within each
  // round (B right after A) does not.
  const perRound = (of: (r: DeliveryRunResult, s: number, i: number) => number) =>
    median(results[0]!.map((_, i) => of(results[1]![i]!, 1, i) / of(results[0]![i]!, 0, i)));
  console.log(
    `B ÷ A, median of the rounds' ratios: ${perRound((r) => r.deliveredPerSec).toFixed(3)}× msg/s, ${perRound((r) => r.serverCpu / r.delivered).toFixed(3)}× CPU/msg, ${perRound((_, s, i) => mainCpu[s]![i]!).toFixed(3)}× main-thread CPU/msg`,
  );
} finally {
  for (const s of servers) await s.stop();
  await receiver.close();
  rmSync(workDir, { recursive: true, force: true });
}
