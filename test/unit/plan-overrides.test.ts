import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { planBook, planTable, plans, UNLIMITED } from "../../src/domain/plans.js";

describe("FERRY_PLAN_<PLAN>_<FIELD>", () => {
  it("reads overrides per plan and field, including the fixed tiers whose names share a prefix", () => {
    const config = loadConfig({
      FERRY_PLAN_FREE_MAX_REQUESTS_PER_DAY: "50000",
      FERRY_PLAN_FREE_MAX_RETRIES: "5",
      FERRY_PLAN_MSGSVC_FIXED_1M_MAX_MESSAGE_SIZE: "1024",
      FERRY_PLAN_MSGSVC_FIXED_100M_TIMEOUT: "60",
      FERRY_PLAN_MSGSVC_FIXED_MAX_QUEUES: "7",
      FERRY_PLAN_PAID_MAX_REQUESTS_PER_DAY: "unlimited",
      FERRY_PLAN_PAID_MAX_TOPICS: "",
    });
    expect(config.planOverrides).toEqual({
      free: { max_requests_per_day: 50_000, max_retries: 5 },
      msgsvc_fixed_1m: { max_message_size: 1024 },
      msgsvc_fixed_100m: { timeout: 60 },
      msgsvc_fixed: { max_queues: 7 },
      paid: { max_requests_per_day: UNLIMITED },
    });
  });

  it("stops start-up naming the variable for an unknown plan, field or value", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ FERRY_PLAN_GOLD_MAX_RETRIES: "3" }, /^config error: FERRY_PLAN_GOLD_MAX_RETRIES names no plan/],
      [{ FERRY_PLAN_FREE_MAX_COLOURS: "3" }, /^config error: FERRY_PLAN_FREE_MAX_COLOURS: "max_colours" is not/],
      [{ FERRY_PLAN_FREE: "3" }, /^config error: FERRY_PLAN_FREE names no plan/],
      [{ FERRY_PLAN_FREE_MAX_RETRIES: "-1" }, /^config error: FERRY_PLAN_FREE_MAX_RETRIES must be a non-negative/],
      [{ FERRY_PLAN_FREE_MAX_RETRIES: "lots" }, /^config error: FERRY_PLAN_FREE_MAX_RETRIES must be a non-negative/],
      [{ FERRY_DEFAULT_PLAN: "gold" }, /^config error: FERRY_DEFAULT_PLAN must be one of free, paid/],
      [{ FERRY_ADMIN_API_KEY: "short" }, /^config error: FERRY_ADMIN_API_KEY must be at least 16/],
      [{ FERRY_ADMIN_EMAIL: "a:b@c" }, /^config error: FERRY_ADMIN_EMAIL must be an e-mail/],
      [{ FERRY_PRICE_PER_100K: "-2" }, /^config error: FERRY_PRICE_PER_100K must be a non-negative number/],
      [{ FERRY_REGION: "mars-1" }, /^config error: FERRY_REGION must be one of/],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    }
  });

  it("applies overrides in the plan book, leaving other plans and fields as built in", () => {
    expect(planBook().limitsOf({ plan: "free" })).toEqual(plans.free);
    const book = planBook({ free: { max_requests_per_day: 50_000 } });
    expect(book.limitsOf({ plan: "free" })).toEqual({ ...plans.free, max_requests_per_day: 50_000 });
    expect(book.limitsOf({ plan: "paid" })).toEqual(plans.paid);
    // Each server holds its own book: an earlier one is not changed by a later one.
    expect(planBook().limitsOf({ plan: "free" })).toEqual(plans.free);
    expect(planTable({}).free).toEqual(plans.free);
    // The built-in table itself is never modified.
    expect(plans.free.max_requests_per_day).toBe(1000);
  });
});
