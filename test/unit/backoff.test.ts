import { describe, expect, it } from "vitest";
import { MAX_HINT_MS, backoffHintMs, defaultBackoffMs } from "../../src/domain/backoff.js";

describe("defaultBackoffMs", () => {
  it("follows min(86400, e^(2.5·(retried+1))) seconds", () => {
    expect(defaultBackoffMs(0)).toBe(Math.round(Math.exp(2.5) * 1000)); // ~12 s
    expect(Math.floor(defaultBackoffMs(0) / 1000)).toBe(12);
    expect(Math.floor(defaultBackoffMs(1) / 1000)).toBe(2 * 60 + 28);
    expect(Math.floor(defaultBackoffMs(2) / 1000)).toBe(30 * 60 + 8);
    expect(Math.floor(defaultBackoffMs(3) / 1000)).toBe(6 * 3600 + 7 * 60 + 6);
    expect(defaultBackoffMs(4)).toBe(86_400_000);
    expect(defaultBackoffMs(50)).toBe(86_400_000);
  });

  it("returns integers", () => {
    for (let n = 0; n < 6; n++) expect(Number.isInteger(defaultBackoffMs(n))).toBe(true);
  });
});

describe("backoffHintMs", () => {
  const now = Date.parse("2024-05-01T12:00:00Z");

  it("reads integer and decimal seconds", () => {
    expect(backoffHintMs({ "retry-after": "10" }, now)).toBe(10_000);
    expect(backoffHintMs({ "retry-after": "1.5" }, now)).toBe(1_500);
  });

  it("treats 0 as immediately", () => {
    expect(backoffHintMs({ "retry-after": "0" }, now)).toBe(0);
  });

  it("reads an HTTP date relative to now", () => {
    expect(backoffHintMs({ "retry-after": "Wed, 01 May 2024 12:00:30 GMT" }, now)).toBe(30_000);
  });

  it("clamps a past date to 0", () => {
    expect(backoffHintMs({ "retry-after": "Wed, 01 May 2024 11:00:00 GMT" }, now)).toBe(0);
  });

  it("reads Go durations", () => {
    expect(backoffHintMs({ "x-ratelimit-reset-requests": "6m5s" }, now)).toBe(365_000);
    expect(backoffHintMs({ "x-ratelimit-reset-tokens": "1.5s" }, now)).toBe(1_500);
    expect(backoffHintMs({ "x-ratelimit-reset": "250ms" }, now)).toBe(250);
    expect(backoffHintMs({ "x-ratelimit-reset": "1h" }, now)).toBe(3_600_000);
    expect(backoffHintMs({ "x-ratelimit-reset": "500µs" }, now)).toBe(1);
  });

  it("ignores values above one day", () => {
    expect(backoffHintMs({ "retry-after": "86401" }, now)).toBeUndefined();
    expect(backoffHintMs({ "retry-after": "25h" }, now)).toBeUndefined();
    expect(backoffHintMs({ "retry-after": "Thu, 02 May 2024 12:00:01 GMT" }, now)).toBeUndefined();
    expect(backoffHintMs({ "retry-after": "86400" }, now)).toBe(MAX_HINT_MS);
  });

  it("uses the first header that parses, in documented order", () => {
    const headers = {
      "x-ratelimit-reset-tokens": "4s",
      "x-ratelimit-reset": "2s",
      "retry-after": "junk",
      "x-ratelimit-reset-requests": "3s",
    };
    expect(backoffHintMs(headers, now)).toBe(2_000);
    expect(backoffHintMs({ ...headers, "retry-after": "1" }, now)).toBe(1_000);
  });

  it("matches header names case-insensitively and takes the first array value", () => {
    expect(backoffHintMs({ "Retry-After": "7" }, now)).toBe(7_000);
    expect(backoffHintMs({ "retry-after": ["8", "9"] }, now)).toBe(8_000);
  });

  it("returns undefined for missing or junk values and never throws", () => {
    expect(backoffHintMs({}, now)).toBeUndefined();
    expect(backoffHintMs({ "retry-after": undefined }, now)).toBeUndefined();
    for (const junk of ["", "abc", "-5", "1d", "10x", "NaN", "Infinity", "1e3", "Wed, 01 May"]) {
      expect(backoffHintMs({ "retry-after": junk }, now)).toBeUndefined();
    }
    expect(backoffHintMs({ "retry-after": [] }, now)).toBeUndefined();
  });
});
