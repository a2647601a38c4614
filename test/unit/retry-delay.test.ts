import { describe, expect, it } from "vitest";
import { compileRetryDelay } from "../../src/domain/retry-delay.js";

const F = "Svc-Retry-Delay";
const compile = (expression: string) => compileRetryDelay(expression, F);

describe("compileRetryDelay", () => {
  it("handles the documented examples", () => {
    expect(compile("1000")(0)).toBe(1000);
    const linear = compile("1000 * (1 + retried)");
    expect([0, 1, 2].map(linear)).toEqual([1000, 2000, 3000]);
    const exponential = compile("pow(2, retried) * 1000");
    expect([0, 1, 2, 3].map(exponential)).toEqual([1000, 2000, 4000, 8000]);
    const floored = compile("max(1000, pow(2, retried) * 100)");
    expect([0, 3, 4, 5].map(floored)).toEqual([1000, 1000, 1600, 3200]);
  });

  it("respects precedence, associativity, unary minus and parentheses", () => {
    expect(compile("1 + 2 * 3")(0)).toBe(7);
    expect(compile("(1 + 2) * 3")(0)).toBe(9);
    expect(compile("100 - 10 - 1")(0)).toBe(89);
    expect(compile("1000 / 10 / 2")(0)).toBe(50);
    expect(compile("1007 % 10")(0)).toBe(7);
    expect(compile("--5 + -(-5)")(0)).toBe(10);
    expect(compile("1000 - -retried")(2)).toBe(1002);
    expect(compile("+5")(0)).toBe(5);
    expect(compile("1.5 * 1000 + .5")(0)).toBe(1501);
  });

  it("supports every function", () => {
    expect(compile("sqrt(1000000)")(0)).toBe(1000);
    expect(compile("abs(-1000)")(0)).toBe(1000);
    expect(compile("round(exp(retried) * 1000)")(1)).toBe(2718);
    expect(compile("floor(10.9)")(0)).toBe(10);
    expect(compile("ceil(10.1)")(0)).toBe(11);
    expect(compile("round(10.5)")(0)).toBe(11);
    expect(compile("min(5, 3, 9)")(0)).toBe(3);
    expect(compile("max(5, 3, 9, retried)")(10)).toBe(10);
  });

  it("clamps to [0, 1 day] and rounds at run time", () => {
    expect(compile("0 - 1000")(0)).toBe(0);
    expect(compile("pow(10, retried)")(20)).toBe(86_400_000);
    expect(compile("10.6")(0)).toBe(11);
  });

  it("turns a run-time NaN into 0", () => {
    // Valid for retried 0..3 (checked at compile time), NaN from retried 4 on.
    const fn = compile("sqrt(3 - retried) * 1000");
    expect(fn(3)).toBe(0);
    expect(fn(4)).toBe(0);
  });

  it("never evaluates JavaScript", () => {
    expect(() => compile("process.exit(1)")).toThrow(F);
    expect(() => compile("constructor")).toThrow(F);
    expect(() => compile("toString(1)")).toThrow(/unknown function "toString"/);
  });

  it.each([
    ["", /expression is empty/],
    ["   ", /expression is empty/],
    ["retries * 1000", /unknown identifier "retries"/],
    ["Math.pow(2, 3)", /unknown (identifier|function)|unexpected/],
    ["log(10)", /unknown function "log"/],
    ["pow(2)", /pow\(\) takes 2 argument/],
    ["pow(2, 3, 4)", /pow\(\) takes 2 argument/],
    ["sqrt()", /sqrt\(\) takes 1 argument/],
    ["min(1)", /min\(\) takes at least 2 argument/],
    ["1 +", /unexpected end of expression/],
    ["(1 + 2", /unexpected end of expression/],
    ["1 + 2)", /unexpected "\)"/],
    ["1 2", /unexpected "2"/],
    ["1 ^ 2", /unexpected character "\^"/],
    ["2 ** 3", /unexpected "\*"/],
    ["max(1,)", /unexpected "\)"/],
    ["retried(1)", /unknown function "retried"/],
    ["1 / 0", /Infinity for retried=0/],
    ["1000 / (retried - 2)", /Infinity for retried=2/],
    ["sqrt(-1)", /NaN for retried=0/],
    ["exp(1000)", /Infinity/],
  ])("rejects %j naming the field", (expression, problem) => {
    expect(() => compile(expression)).toThrow(problem);
    expect(() => compile(expression)).toThrow(`invalid ${F}:`);
  });

  it("accepts 1000 characters and rejects 1001 naming the field", () => {
    expect(compile(`${" ".repeat(996)}1000`)(0)).toBe(1000);
    expect(() => compile(`${" ".repeat(997)}1000`)).toThrow(`invalid ${F}: expression is longer than 1000 characters`);
  });
});
