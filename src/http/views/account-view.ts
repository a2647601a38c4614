import { type PlanBook, type PlanName, planNames } from "../../domain/plans.js";
import { invalidField, quoted } from "../../errors.js";
import type { Account } from "../../domain/records.js";
import type { Dialect } from "../../domain/dialect.js";
import type { ManagementAccount } from "../schemas/management.js";

/** Plan names on the wire follow the dialect (`msgsvc_fixed_1m` / `qstash_fixed_1m`); internally `msgsvc_fixed_*`. */
const INTERNAL_FIXED = "msgsvc_fixed";

export function wirePlanName(plan: PlanName, dialect: Dialect): string {
  return plan.startsWith(INTERNAL_FIXED) ? dialect.fixedPlanPrefix + plan.slice(INTERNAL_FIXED.length) : plan;
}

/** Reads a wire plan name (`plan_name`, `--plan`) in the dialect's spelling; a 400 naming `field` lists them. */
export function parsePlanName(value: unknown, dialect: Dialect, field: string): PlanName {
  const match = planNames.find((p) => wirePlanName(p, dialect) === value);
  if (match !== undefined) return match;
  const names = planNames.map((p) => wirePlanName(p, dialect)).join(", ");
  if (value === undefined || value === null) throw invalidField(field, `is required (one of ${names})`);
  throw invalidField(field, `${quoted(value)} must be one of ${names}`);
}

/**
 * The messaging-account record of docs/management.md "The account record", every field, in its order (the shape keeps
 * it on the wire): plan limits from the plan table in force (overrides applied), `prometheus_enabled` as the string
 * "true"/"false", `modifying_state` only while a change is in progress, `enterprise` only for enterprise accounts.
 * Times are Unix seconds.
 */
export function accountRecord(account: Account, dialect: Dialect, plans: PlanBook): ManagementAccount {
  return {
    customer_id: account.customerId,
    id: account.id,
    password: account.password,
    token: account.token,
    read_only_token: account.readOnlyToken ?? "",
    active: account.active,
    state: account.state,
    ...(account.modifyingState ? { modifying_state: account.modifyingState } : {}),
    last_plan_upgrade_time: account.lastPlanUpgradeTime ?? 0,
    ...plans.limitsOf(account),
    type: account.plan === "free" ? "free" : "paid",
    reserved_type:
      account.enterpriseId !== undefined
        ? `enterprise:${account.enterpriseId}`
        : account.plan.startsWith(INTERNAL_FIXED)
          ? wirePlanName(account.plan, dialect)
          : "",
    reserved_price: account.reservedPrice ?? 0,
    prod_pack_enabled: account.prodPackEnabled ?? false,
    prometheus_enabled: account.prometheusEnabled ? "true" : "false",
    ...(account.enterpriseId !== undefined ? { enterprise: { enabled: true } } : {}),
    region: account.region ?? "eu-central-1",
    budget: account.budget ?? 0,
    created_by: account.createdBy ?? account.customerId,
    creation_time: Math.floor(account.createdAt / 1000),
  };
}
