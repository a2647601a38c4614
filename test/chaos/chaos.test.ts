import { describe, expect, it } from "vitest";
import { runChaos } from "./rounds.js";

/** The bounded crash rounds of `npm test`: 10 rounds (CHAOS_ROUNDS overrides), a random seed (CHAOS_SEED pins one). */
const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const rounds = Number(process.env.CHAOS_ROUNDS ?? 10);

describe("crash rounds", () => {
  it(`${rounds} SIGKILL rounds on SQLite keep the ledger (seed ${seed})`, async () => {
    const report = await runChaos({ rounds, seed, log: (line) => console.log(line) });
    console.log(
      `chaos: seed ${seed}: rounds ${report.rounds}, messages ${report.messages}, lost ${report.lost}, ` +
        `duplicates ${report.duplicates} (allowed ${report.inFlightAtKills})`,
    );
    expect(report.failures).toEqual([]);
    expect(report.rounds).toBe(rounds);
    expect(report.lost).toBe(0);
    expect(report.messages).toBeGreaterThan(0);
  }, 600_000);
});
