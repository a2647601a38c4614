import { describeFailure, runFuzz } from "./engine.js";

/** `npm run fuzz -- --seed N --requests M` (defaults: a random seed, 100,000 requests). Exit code 1 on a failure. */
function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const seed = Number(arg("seed") ?? Math.floor(Math.random() * 2 ** 31));
const requests = Number(arg("requests") ?? 100_000);
const concurrency = Number(arg("concurrency") ?? 16);
if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(requests) || requests < 1) {
  console.error("usage: npm run fuzz -- [--seed N] [--requests M] [--concurrency C]");
  process.exit(2);
}
console.log(`fuzz: seed ${seed}, ${requests} requests, ${concurrency} at a time`);
const started = Date.now();
const report = await runFuzz({ seed, requests, concurrency, log: (l) => console.log(l) });
const lost = report.ledger.acknowledged - report.ledger.delivered;
console.log(
  `fuzz: seed ${seed}: ${report.requests} requests fuzzed in ${Math.round((Date.now() - started) / 1000)} s; ` +
    `5xx seen: ${report.fiveHundreds}; statuses ${JSON.stringify(report.byStatus)}; ` +
    `ledger: ${report.ledger.acknowledged} acknowledged, ${report.ledger.delivered} delivered, ${lost} lost; ` +
    `max heap ${report.maxHeapMb} MB`,
);
for (const f of report.failures) console.error(describeFailure(report, f));
if (lost > 0) console.error(`fuzz: ledger messages not delivered within 60 s: ${report.ledger.lostIds.join(", ")}`);
process.exit(report.failures.length > 0 || lost > 0 ? 1 : 0);
