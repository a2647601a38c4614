/**
 * An account's monthly budget in dollars (docs/management.md "Messaging accounts"): 0 for no limit, or a whole number
 * of dollars from 20 to 10,000, as the hosted service accepts.
 */
export const BUDGET_MIN = 20;
export const BUDGET_MAX = 10_000;

/** The rule in words, for the refusal that names the field. */
export const BUDGET_RULE = `0 or an integer in ${BUDGET_MIN}..${BUDGET_MAX}`;

export function isBudget(value: number): boolean {
  return Number.isInteger(value) && (value === 0 || (value >= BUDGET_MIN && value <= BUDGET_MAX));
}
