import { EgressConfigError, parseEgressPolicy } from "../domain/egress-policy.js";
import { isLimitField, type PlanOverrides, planNames, UNLIMITED } from "../domain/plans.js";

/**
 * The parsers of configuration values (docs/configuration.md). Each takes the variable's raw value (trimmed, never
 * empty: an empty variable counts as unset) and its name, and throws a `ConfigError` naming the variable when the
 * value is bad, so a bad value stops start-up with a line that says which variable to fix.
 */
export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;
export type Parse<T> = (raw: string, variable: string) => T;

/** The variable's value, trimmed; undefined when unset or empty. */
export function envValue(env: Env, variable: string): string | undefined {
  const value = env[variable]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

export const text: Parse<string> = (raw) => raw;

export function int(min: number, max: number): Parse<number> {
  return (raw, variable) => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new ConfigError(`config error: ${variable} must be an integer in ${min}..${max} (got "${raw}")`);
    }
    return value;
  };
}

/** One of `allowed`, matched without regard to case, answered as written in `allowed`. */
export function oneOf<const T extends string>(allowed: readonly T[]): Parse<T> {
  return (raw, variable) => {
    const match = allowed.find((a) => a.toLowerCase() === raw.toLowerCase());
    if (match === undefined) {
      throw new ConfigError(`config error: ${variable} must be one of ${allowed.join(", ")} (got "${raw}")`);
    }
    return match;
  };
}

export const onOff: Parse<boolean> = (raw, variable) => oneOf(["on", "off"])(raw, variable) === "on";

/**
 * `auto`: the egress thread only when this process may run on more than one CPU. On one, the thread cannot run beside
 * the main thread and its hand-overs only add work (docs/threading.md, "On one CPU").
 */
export function egressThreadWanted(setting: "auto" | "on" | "off", cpus: number): boolean {
  return setting === "on" || (setting === "auto" && cpus > 1);
}

export function atLeast(length: number): Parse<string> {
  return (raw, variable) => {
    if (raw.length < length) {
      throw new ConfigError(`config error: ${variable} must be at least ${length} characters (got ${raw.length})`);
    }
    return raw;
  };
}

export const decimal: Parse<number> = (raw, variable) => {
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !Number.isFinite(value)) {
    throw new ConfigError(`config error: ${variable} must be a non-negative number (got "${raw}")`);
  }
  return value;
};

export const databaseUrl: Parse<string> = (raw, variable) => {
  if (!/^sqlite:.+/.test(raw) && !/^postgres(ql)?:\/\/.+/.test(raw)) {
    throw new ConfigError(`config error: ${variable} must be sqlite:<path> or postgres://… (got "${raw}")`);
  }
  return raw;
};

export const httpUrl: Parse<string> = (raw, variable) => {
  if (!/^https?:\/\/[^\s]+$/.test(raw)) {
    throw new ConfigError(`config error: ${variable} must be an http(s) URL (got "${raw}")`);
  }
  return raw;
};

export const email: Parse<string> = (raw, variable) => {
  if (!/^[^\s:@]+@[^\s:@]+$/.test(raw)) {
    throw new ConfigError(`config error: ${variable} must be an e-mail address without ":" (got "${raw}")`);
  }
  return raw;
};

/** Checked as the egress policy reads it (src/domain/egress-policy.ts), kept as written. */
export const egressAllowList: Parse<string> = (raw) => {
  try {
    parseEgressPolicy(raw);
  } catch (error) {
    if (error instanceof EgressConfigError) throw new ConfigError(error.message);
    throw error;
  }
  return raw;
};

/**
 * FERRY_PLAN_<PLAN>_<FIELD>=<value>: PLAN is a plan name upper-cased (FREE, PAID, MSGSVC_FIXED_1M …), FIELD a limit
 * field upper-cased (MAX_REQUESTS_PER_DAY …), value a non-negative integer or `unlimited`.
 */
export function planOverrides(env: Env, prefix: string): PlanOverrides {
  const out: PlanOverrides = {};
  // Longest first: MSGSVC_FIXED is a prefix of MSGSVC_FIXED_1M.
  const names = [...planNames].sort((a, b) => b.length - a.length);
  for (const key of Object.keys(env).sort()) {
    if (!key.startsWith(prefix)) continue;
    const raw = envValue(env, key);
    if (raw === undefined) continue;
    const rest = key.slice(prefix.length);
    const plan = names.find((name) => rest.startsWith(`${name.toUpperCase()}_`));
    if (plan === undefined) {
      throw new ConfigError(
        `config error: ${key} names no plan; use FERRY_PLAN_<PLAN>_<FIELD> with PLAN one of ${planNames.map((p) => p.toUpperCase()).join(", ")}`,
      );
    }
    const field = rest.slice(plan.length + 1).toLowerCase();
    if (!isLimitField(field)) {
      throw new ConfigError(`config error: ${key}: "${field}" is not a plan limit field`);
    }
    const value = raw.toLowerCase() === "unlimited" ? UNLIMITED : Number(raw);
    if (!(raw.toLowerCase() === "unlimited" || /^\d+$/.test(raw)) || !Number.isSafeInteger(value)) {
      throw new ConfigError(`config error: ${key} must be a non-negative integer or "unlimited" (got "${raw}")`);
    }
    out[plan] = { ...out[plan], [field]: value };
  }
  return out;
}
