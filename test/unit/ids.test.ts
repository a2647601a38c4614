import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeUlid, ulid } from "../../src/domain/ids.js";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** The straightforward encoding: the time, then all 80 random bits as one number. */
function reference(ms: number, random: Uint8Array): string {
  let time = "";
  for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time;
  let bits = 0n;
  for (const b of random) bits = (bits << 8n) | BigInt(b);
  let rest = "";
  for (let i = 0; i < 16; i++, bits >>= 5n) rest = CROCKFORD[Number(bits & 31n)] + rest;
  return time + rest;
}

describe("ulid", () => {
  it("encodes a time and 80 random bits as the reference does", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 48 - 1 }),
        fc.uint8Array({ minLength: 10, maxLength: 10 }),
        (ms, random) => encodeUlid(ms, random) === reference(ms, random),
      ),
      { numRuns: 2000 },
    );
    expect(encodeUlid(0, new Uint8Array(10))).toBe("0".repeat(26));
    expect(encodeUlid(2 ** 48 - 1, new Uint8Array(10).fill(255))).toBe("7" + "Z".repeat(25));
  });

  it("orders ids by time, and within one millisecond by issue", () => {
    const ids = [ulid(1_000), ulid(1_000), ulid(1_000), ulid(999), ulid(1_001)];
    expect(ids.every((id) => /^[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
