import { describe, expect, it } from "vitest";
import { parseFlowControlValue } from "../../src/domain/flow-control-value.js";

const F = "Svc-Flow-Control-Value";
const parse = (value: string) => parseFlowControlValue(value, F);

describe("parseFlowControlValue", () => {
  it("parses the SDK forms", () => {
    expect(parse("parallelism=3, rate=5")).toEqual({ parallelism: 3, rate: 5, periodSec: 1 });
    expect(parse("parallelism=5, rate=10, period=1m")).toEqual({ parallelism: 5, rate: 10, periodSec: 60 });
    expect(parse("rate=3,period=1d")).toEqual({ rate: 3, periodSec: 86_400 });
  });

  it("accepts one of parallelism or rate alone", () => {
    expect(parse("parallelism=1")).toEqual({ parallelism: 1, periodSec: 1 });
    expect(parse("rate=7")).toEqual({ rate: 7, periodSec: 1 });
  });

  it("is lenient about spaces, key case and empty entries", () => {
    expect(parse(" Parallelism = 2 ,RATE=4 , Period=1h30m3s,")).toEqual({ parallelism: 2, rate: 4, periodSec: 5403 });
  });

  it("reads a bare integer period as seconds and allows the bounds", () => {
    expect(parse("rate=1, period=30").periodSec).toBe(30);
    expect(parse("rate=1, period=1s").periodSec).toBe(1);
    expect(parse("rate=1, period=7d").periodSec).toBe(604_800);
    expect(parse("rate=1, period=604800").periodSec).toBe(604_800);
    expect(parse("rate=1, period=1500ms").periodSec).toBe(1);
  });

  it.each([
    ["", /at least one of parallelism and rate/],
    ["period=10s", /at least one of parallelism and rate/],
    ["parallelism=0", /parallelism must be an integer >= 1/],
    ["rate=-1", /rate must be an integer >= 1/],
    ["rate=1.5", /rate must be an integer >= 1/],
    ["rate=abc", /rate must be an integer >= 1/],
    ["rate=", /rate must be an integer >= 1/],
    ["rate=99999999999999999999", /rate must be an integer >= 1/],
    ["rate=1, period=0s", /period must be between 1s and 1 week/],
    ["rate=1, period=999ms", /period must be between 1s and 1 week/],
    ["rate=1, period=8d", /period must be between 1s and 1 week/],
    ["rate=1, period=soon", /is not a duration/],
    ["rate=1, burst=2", /unknown key "burst"/],
    ["rate=1, rate=2", /duplicate key "rate"/],
    ["rate=1, RATE=2", /duplicate key "rate"/],
    ["rate", /"rate" is not a key=value pair/],
  ])("rejects %j naming the field", (value, problem) => {
    expect(() => parse(value)).toThrow(problem);
    expect(() => parse(value)).toThrow(`invalid ${F}:`);
  });
});
