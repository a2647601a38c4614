import { describe, expect, it } from "vitest";
import { describeFailure, runFuzz } from "./engine.js";

/**
 * The bounded fuzz run of `npm test`: 10,000 generated requests (FUZZ_REQUESTS overrides) over both dialects, with
 * a fresh random seed each run (FUZZ_SEED pins one). A failure prints the seed and the shrunk request.
 */
const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const requests = Number(process.env.FUZZ_REQUESTS ?? 10_000);

describe("fuzzing every route", () => {
  it(`${requests} requests keep every invariant (seed ${seed})`, async () => {
    const report = await runFuzz({ seed, requests, log: (line) => console.log(line) });
    console.log(
      `fuzz: seed ${seed}: ${report.requests} requests, 5xx ${report.fiveHundreds}, statuses ${JSON.stringify(report.byStatus)}, ` +
        `ledger ${report.ledger.delivered}/${report.ledger.acknowledged} delivered, max heap ${report.maxHeapMb} MB`,
    );
    expect(report.failures.map((f) => describeFailure(report, f))).toEqual([]);
    expect(report.requests).toBe(requests);
    expect(report.ledger.delivered).toBe(report.ledger.acknowledged);
  }, 600_000);
});
