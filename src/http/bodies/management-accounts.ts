import { BUDGET_RULE, isBudget } from "../../domain/budget.js";
import type { Dialect } from "../../domain/dialect.js";
import type { PlanName } from "../../domain/plans.js";
import { invalidField } from "../../errors.js";
import { parsePlanName } from "../views/account-view.js";

/*
 * The request bodies of the messaging-account actions on the management API (docs/management.md), read into the
 * typed values src/services/management.ts takes. Every refusal is a 400 naming the field.
 */

/** `{"plan_name"}` of set-plan, in the spelling of the path's dialect. */
export function parsePlanBody(body: Record<string, unknown>, dialect: Dialect): PlanName {
  return parsePlanName(body.plan_name, dialect, "plan_name");
}

/** `{"budget"}` of update-budget: monthly dollars under the rule of src/domain/budget.ts. */
export function parseBudgetBody(body: Record<string, unknown>): number {
  const budget = body.budget;
  if (budget === undefined) throw invalidField("budget", "is required");
  if (typeof budget !== "number" || !isBudget(budget)) throw invalidField("budget", `must be ${BUDGET_RULE}`);
  return budget;
}
