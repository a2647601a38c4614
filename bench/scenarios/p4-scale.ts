import { statSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ferryEnv, getFerryRoot, newDataDir } from "../lib/ferry.js";
import { freePort, repoRoot, startNodeChild, tail } from "../lib/proc.js";
import { type BenchContext, pick, rounds, type Scenario } from "../lib/scenario.js";
import { medianOf } from "../lib/stats.js";
import { describeRound, type IngestRound, startIngestTarget } from "../lib/ingest.js";

/** Seeds the store through Ferry's own Store interface (bench/apps/seed-store.ts) before the server starts. */
async function seed(ctx: BenchContext, dataDir: string, count: number): Promise<{ ms: number }> {
  const port = await freePort();
  const logPath = join(dataDir, "seed.log");
  const child = startNodeChild("seed-store", "bench/apps/seed-store.ts", {
    env: { ...ferryEnv(dataDir, port), SEED_COUNT: String(count), BENCH_FERRY_ROOT: getFerryRoot() ?? repoRoot },
    logPath,
  });
  ctx.defer(() => child.stop());
  const limitMs = pick(ctx, 12 * 60_000, 2 * 60_000);
  const code = await Promise.race([child.exited, sleep(limitMs).then(() => "timeout")]);
  if (code !== "0") {
    await child.stop(1000);
    throw new Error(`seeding ${count} messages failed (${code}):\n${tail(logPath, 10)}`);
  }
  const line = tail(logPath, 5)
    .split("\n")
    .find((l) => l.startsWith("{"));
  return { ms: line ? (JSON.parse(line) as { ms: number }).ms : Number.NaN };
}

/**
 * P4: publish throughput (autocannon, as P2) on an empty store and on a store holding `count` pending delayed
 * messages (due in about a day, 1 KiB bodies), and the server's peak RSS (VmHWM) during the seeded run.
 */
export const p4Scenario: Scenario = {
  id: "p4",
  title: "P4 scale: 1,000,000 pending delayed messages",
  async run(ctx) {
    const count = pick(ctx, 1_000_000, 50_000);
    const seconds = pick(ctx, 5, 2);
    const dataDir = newDataDir(ctx.workDir, "p4-seeded");
    ctx.log(`seeding ${count} delayed messages through the Store interface …`);
    const seeded = await seed(ctx, dataDir, count);
    const dbBytes = statSync(join(dataDir, "ferry.db")).size;
    ctx.log(`seeded in ${(seeded.ms / 1000).toFixed(0)} s (${(dbBytes / 2 ** 30).toFixed(2)} GiB)`);

    // Both servers run side by side and their rounds alternate, so a change in the machine's load during the
    // scenario hits both alike instead of biasing the ratio. Compiled, as `npm start` runs them: the peak RSS is
    // the one a deployment sees (from source, tsx's loader and its hooks thread add about 30 MiB per thread).
    const empty = await startIngestTarget(ctx, { name: "p4-empty", compiled: true });
    const full = await startIngestTarget(ctx, { name: "p4-seeded", dataDir, compiled: true });
    const emptyRounds: IngestRound[] = [];
    const fullRounds: IngestRound[] = [];
    for (let i = 0; i < rounds(ctx); i++) {
      emptyRounds.push(await empty.round(seconds));
      fullRounds.push(await full.round(seconds));
    }
    const e = await medianOf(
      emptyRounds.length,
      async (i) => emptyRounds[i]!,
      (r) => r.rps,
    );
    const f = await medianOf(
      fullRounds.length,
      async (i) => fullRounds[i]!,
      (r) => r.rps,
    );
    const emptyPeak = empty.peakMiB();
    const fullPeak = full.peakMiB();
    ctx.record({
      key: "p4.emptyAcks",
      scenario: "P4 scale",
      metric: "publish, empty store",
      value: e.median.rps,
      unit: "acks/s",
      detail: `${describeRound(e.median, seconds)}; ${e.spread}, alternating with the seeded store's rounds`,
    });
    ctx.record({
      key: "p4.acks",
      scenario: "P4 scale",
      metric: `publish, ${count.toLocaleString("en-US")} pending delayed`,
      value: f.median.rps,
      unit: "acks/s",
      detail: `${describeRound(f.median, seconds)}; ${f.spread}; ${count.toLocaleString("en-US")} pending, seeded in ${(seeded.ms / 1000).toFixed(0)} s through the Store interface, db ${(dbBytes / 2 ** 30).toFixed(2)} GiB`,
    });
    ctx.record({
      key: "p4.rss",
      scenario: "P4 scale",
      metric: "server peak RSS (VmHWM), seeded store",
      value: fullPeak,
      unit: "MiB",
      detail: `empty store: ${emptyPeak?.toFixed(0)} MiB`,
    });
  },
};
