import { describe, expect, it } from "vitest";
import { BUDGET_MAX, BUDGET_MIN, BUDGET_RULE, isBudget } from "../../src/domain/budget.js";

/** An account's monthly budget (src/domain/budget.ts, docs/management.md): 0, or a whole number of dollars in 20..10000. */
describe("isBudget", () => {
  it("accepts 0 (no limit) and whole dollars from 20 to 10000", () => {
    for (const ok of [0, BUDGET_MIN, 21, 500, BUDGET_MAX]) expect(isBudget(ok), String(ok)).toBe(true);
  });

  it("refuses amounts outside the range, fractions, negatives and non-finite numbers", () => {
    for (const bad of [1, 19, BUDGET_MAX + 1, 20.5, -20, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(isBudget(bad), String(bad)).toBe(false);
    }
  });

  it("says the rule in the words of the refusal", () => {
    expect(BUDGET_RULE).toBe("0 or an integer in 20..10000");
  });
});
