/**
 * What a batch at the item limit (MAX_BATCH_ITEMS, docs/batch.md "Limits") costs everyone else: a probe publishes one
 * message every 20 ms and records its latency, first alone, then while a client sends a full batch every 500 ms.
 * Every message is delayed a day, so what is measured is the batch's own cost (parse, validate, commit), not the
 * deliveries of its messages.
 * `node --import tsx bench/batch-limit.ts [--seconds=10]`. Prints the probe's p50/p99/max in both phases and the
 * batches' own latency. Traffic only to 127.0.0.1 (the messages go to a closed port: they are stored, not delivered
 * anywhere). Figures are meaningless while other work runs on the machine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { MAX_BATCH_ITEMS } from "../src/services/batch.js";
import { BENCH_TOKEN, startFerry } from "./lib/ferry.js";
import { percentile } from "./lib/stats.js";

const seconds = Number(process.argv.find((a) => a.startsWith("--seconds="))?.split("=")[1] ?? 10);
const destination = "http://127.0.0.1:9/batch-limit";
const auth = { authorization: `Bearer ${BENCH_TOKEN}` };

async function timed(path: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  const res = await request(`${origin}${path}`, { method: "POST", headers: { ...auth, ...headers }, body });
  await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${path}: ${res.statusCode}`);
  return performance.now() - started;
}

/** Publishes one small message every 20 ms for `ms`, bounded by the clock; returns each latency. */
async function probe(ms: number): Promise<number[]> {
  const latencies: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    latencies.push(await timed(`/v2/publish/${destination}`, "probe", { "svc-delay": "1d" }));
    await new Promise((r) => setTimeout(r, 20));
  }
  return latencies;
}

const ms = (xs: number[], p: number) => (percentile(xs, p) ?? NaN).toFixed(1);
const fmt = (xs: number[]) => `p50 ${ms(xs, 50)} ms, p99 ${ms(xs, 99)} ms, max ${ms(xs, 100)} ms (${xs.length})`;

const workDir = mkdtempSync(join(tmpdir(), "ferry-batch-limit-"));
const ferry = await startFerry({ workDir, name: "batch-limit" });
const origin = ferry.origin;
try {
  const items = JSON.stringify(
    Array.from({ length: MAX_BATCH_ITEMS }, (_, i) => ({ destination, headers: { "svc-delay": "1d" }, body: `item ${i} ${"x".repeat(200)}` })),
  );
  await probe(1000); // warm-up
  const alone = await probe(seconds * 1000);

  let sending = true;
  const batchLatencies: number[] = [];
  const batches = (async () => {
    while (sending) {
      batchLatencies.push(await timed("/v2/batch", items, { "content-type": "application/json" }));
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  const beside = await probe(seconds * 1000);
  sending = false;
  await batches;

  const over = await request(`${origin}/v2/batch`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: `[${`{"destination":"${destination}"},`.repeat(MAX_BATCH_ITEMS)}{"destination":"${destination}"}]`,
  });
  console.log(`limit: ${MAX_BATCH_ITEMS} items per batch; one item over answers ${over.statusCode} ${await over.body.text()}`);
  console.log(`probe publish alone:              ${fmt(alone)}`);
  console.log(`probe publish beside full batches: ${fmt(beside)}`);
  console.log(`full batches (${MAX_BATCH_ITEMS} items, ${(items.length / 1024).toFixed(0)} KiB): ${fmt(batchLatencies)}`);
} finally {
  await ferry.stop();
  rmSync(workDir, { recursive: true, force: true });
}
