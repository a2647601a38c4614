import { runChaos } from "./rounds.js";

/** `npm run chaos -- [--rounds N] [--seed S]` (default 100 rounds, a random seed). Exit code 1 if the ledger broke. */
function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const rounds = Number(arg("rounds") ?? 100);
const seed = Number(arg("seed") ?? Math.floor(Math.random() * 2 ** 31));
console.log(`chaos: seed ${seed}, ${rounds} rounds of SIGKILL under a mixed load on SQLite`);
const started = Date.now();
const report = await runChaos({ rounds, seed, log: (l) => console.log(l) });
console.log(
  `chaos: seed ${seed}: rounds ${report.rounds}, messages ${report.messages}, lost ${report.lost}, ` +
    `duplicates ${report.duplicates} (allowed ${report.inFlightAtKills}: deliveries in flight at the kills), ` +
    `callbacks missing ${report.callbacksMissing}, ${Math.round((Date.now() - started) / 1000)} s`,
);
for (const f of report.failures) console.error(`chaos failure: ${f}`);
process.exit(report.failures.length > 0 ? 1 : 0);
