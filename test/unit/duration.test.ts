import { describe, expect, it } from "vitest";
import { formatSeconds, parseDurationMs, tryParseDurationMs } from "../../src/domain/duration.js";

describe("parseDurationMs", () => {
  it.each([
    ["50s", 50_000],
    ["1d10h30m", 124_200_000],
    ["1h30m3s", 5_403_000],
    ["3d5h12m", 277_920_000],
    ["1.5h", 5_400_000],
    ["250ms", 250],
    ["1m30s", 90_000],
    ["0s", 0],
    ["30", 30_000],
    ["0", 0],
    ["  10s  ", 10_000],
    ["1500us", 2],
    ["1500µs", 2],
    ["1500μs", 2],
    ["2000000ns", 2],
    [".5s", 500],
  ])("parses %j", (input, ms) => {
    expect(parseDurationMs(input, "Svc-Delay")).toBe(ms);
  });

  it.each(["", "   ", "abc", "10x", "-5s", "-5", "s", "1.5", "1h 30m", "5s5", "1e3s", "99999999999999999999d"])(
    "rejects %j naming the field",
    (input) => {
      expect(() => parseDurationMs(input, "Svc-Delay")).toThrow(/invalid Svc-Delay: .* is not a duration/);
    },
  );

  it("carries the 400 status", () => {
    try {
      parseDurationMs("abc", "Svc-Timeout");
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ status: 400, code: "invalid_input" });
      expect((error as Error).message).toContain("Svc-Timeout");
      expect((error as Error).message).toContain('"abc"');
    }
  });
});

describe("tryParseDurationMs", () => {
  it("returns undefined instead of throwing", () => {
    expect(tryParseDurationMs("junk")).toBeUndefined();
    expect(tryParseDurationMs("")).toBeUndefined();
  });

  it("can refuse days", () => {
    expect(tryParseDurationMs("1d")).toBe(86_400_000);
    expect(tryParseDurationMs("1d", false)).toBeUndefined();
  });
});

describe("formatSeconds", () => {
  it("echoes whole seconds", () => {
    expect(formatSeconds(90_000)).toBe("90s");
    expect(formatSeconds(1_999)).toBe("1s");
    expect(formatSeconds(0)).toBe("0s");
  });
});
