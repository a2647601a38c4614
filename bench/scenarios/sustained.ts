import { statSync } from "node:fs";
import { publishRequest, startFerry } from "../lib/ferry.js";
import { makeBody, openLoop } from "../lib/generator.js";
import { CpuMeter, memoryOf } from "../lib/proc.js";
import { BenchReceiver } from "../lib/receiver.js";
import { type Scenario, pick } from "../lib/scenario.js";
import { cpuPerMessage, microsPerMessage } from "../lib/stats.js";
import { sqliteTableSizes, type TableSize } from "../lib/table-sizes.js";

/** Retention is the shortest Ferry allows (1 min), so it applies several times within the run. */
const RETENTION_MS = 60_000;

function sizesMarkdown(samples: { label: string; sizes: TableSize[]; fileBytes: number }[]): string {
  const tables = [...new Set(samples.flatMap((s) => s.sizes.map((t) => t.table)))].sort();
  const mib = (b: number | undefined) => (b === undefined ? "—" : (b / 1024 / 1024).toFixed(1));
  const header = `| Table | ${samples.map((s) => `${s.label} rows | ${s.label} MiB`).join(" | ")} |`;
  const rule = `|---|${samples.map(() => "---:|---:").join("|")}|`;
  const rows = tables.map((t) => {
    const cells = samples.map((s) => {
      const size = s.sizes.find((x) => x.table === t);
      return `${size ? size.rows.toLocaleString("en-US") : "—"} | ${mib(size?.bytes)}`;
    });
    return `| ${t} | ${cells.join(" | ")} |`;
  });
  const file = `| (database file + WAL) | ${samples.map((s) => ` | ${mib(s.fileBytes)}`).join(" | ")} |`;
  return [header, rule, ...rows, file].join("\n");
}

/**
 * Sustained load: Ferry on SQLite at P1's rate (P1's figure of this run when it ran, else BENCH_SUSTAINED_RATE,
 * default 2,000 msg/s) for 10 minutes, open loop, log retention at its 1-minute minimum. Every table's rows and
 * bytes are read at the start, each minute and at the end: with retention applying, nothing may grow without bound.
 * Not part of the default run (it takes 10 minutes): `npm run bench -- sustained`.
 */
export const sustainedScenario: Scenario = {
  id: "sustained",
  title: "Sustained P1-rate load, table sizes",
  optIn: true,
  async run(ctx) {
    const rate = Math.round(ctx.value("p1.delivered") ?? Number(process.env.BENCH_SUSTAINED_RATE ?? "2000"));
    const minutes = pick(ctx, 10, 1);
    const receiver = await BenchReceiver.start();
    ctx.defer(() => receiver.close());
    const ferry = await startFerry({
      workDir: ctx.workDir,
      name: "sustained",
      env: { FERRY_LOG_RETENTION_MS: String(RETENTION_MS) },
    });
    ctx.defer(() => ferry.stop());
    const dbPath = ferry.databaseUrl.slice("sqlite:".length);
    const fileBytes = () =>
      [dbPath, `${dbPath}-wal`].reduce((sum, f) => {
        try {
          return sum + statSync(f).size;
        } catch {
          return sum;
        }
      }, 0);
    const samples: { label: string; sizes: TableSize[]; fileBytes: number }[] = [];
    const sample = (label: string) => samples.push({ label, sizes: sqliteTableSizes(dbPath), fileBytes: fileBytes() });

    sample("start");
    const body = makeBody(1024);
    const destination = receiver.url("/sustained");
    const cpu = new CpuMeter([ferry.child.pid]);
    const receiverCpu = new CpuMeter([receiver.pid]);
    const load = openLoop({
      origin: ferry.origin,
      ratePerSec: rate,
      durationMs: minutes * 60_000,
      connections: 64,
      maxInFlight: 5_000,
      make: () => publishRequest(destination, body),
    });
    const marks = minutes >= 10 ? [1, 5] : [];
    for (const m of marks) {
      await new Promise((resolve) => setTimeout(resolve, (m === marks[0] ? m : m - marks[0]!) * 60_000));
      sample(`${m} min`);
    }
    const result = await load;
    await receiver.waitFor(result.acked, 60_000);
    const used = cpu.read();
    const receiverSeconds = receiverCpu.read().servers;
    sample("end");
    const rss = memoryOf(ferry.child.pid);
    const delivered = receiver.count;
    ctx.record({
      key: "sustained.delivered",
      scenario: "Sustained load",
      metric: `${minutes} min at P1's rate, delivered`,
      value: delivered / (minutes * 60),
      unit: "msg/s",
      detail: `asked ${rate}/s; ${result.acked} acknowledged, ${delivered} delivered${result.skipped > 0 ? `, ${result.skipped} sends SKIPPED (backlog)` : ""}${result.errors > 0 ? `, ${result.errors} publish errors` : ""}; ${cpuPerMessage(used.servers, delivered)}, generator ${microsPerMessage(used.bench, delivered)} µs/msg, receiver ${microsPerMessage(receiverSeconds, delivered)} µs/msg; peak RSS ${rss ? rss.peakMiB.toFixed(0) : "?"} MiB; log retention ${RETENTION_MS / 1000} s; table sizes in the section below`,
    });
    ctx.section(
      "Sustained load: table sizes",
      `Ferry on SQLite at ${rate} msg/s for ${minutes} min (open loop, 1 KiB bodies), \`FERRY_LOG_RETENTION_MS=${RETENTION_MS}\` ` +
        "(retention runs every minute). Rows and bytes (table and its indexes, SQLite's dbstat) read beside the running " +
        `server.\n\n${sizesMarkdown(samples)}`,
    );
    await ferry.stop();
  },
};
