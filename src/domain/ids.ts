import { randomBytes, randomUUID } from "node:crypto";

/**
 * Time-ordered ids: random primary keys cost ~4x on batched inserts (architecture.md), and time order makes
 * `ORDER BY id` a creation order for free. Public prefixes follow the reference (`msg_`, `scd_`, `sig_`).
 */
const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

// Random bytes are drawn in blocks: one crypto call per id would dominate publish cost.
let pool = randomBytes(4096);
let poolOffset = 0;
function random(n: number): Buffer {
  if (poolOffset + n > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  const out = pool.subarray(poolOffset, poolOffset + n);
  poolOffset += n;
  return out;
}

let lastMs = 0;
let lastRandom: Buffer = Buffer.alloc(10);

/** ULID-style: 10 chars of ms time + 16 chars of randomness, monotonic within one millisecond. */
export function ulid(nowMs: number = Date.now()): string {
  if (nowMs <= lastMs) {
    // Same (or an earlier) millisecond: the previous randomness plus one keeps the ids in order.
    for (let i = lastRandom.length - 1; i >= 0; i--) {
      lastRandom[i] = (lastRandom[i]! + 1) & 0xff;
      if (lastRandom[i] !== 0) break;
    }
  } else {
    lastMs = nowMs;
    lastRandom = Buffer.from(random(10));
  }
  return encodeUlid(lastMs, lastRandom);
}

/**
 * The 26 Crockford base-32 characters of a time and 10 random bytes. The 80 random bits are encoded as two 40-bit
 * halves, each exact in a double (40 is a multiple of 5, so no character straddles the halves): plain arithmetic,
 * several times faster than one BigInt.
 */
export function encodeUlid(ms: number, random: Uint8Array): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out + base32Of40Bits(random, 0) + base32Of40Bits(random, 5);
}

function base32Of40Bits(bytes: Uint8Array, from: number): string {
  let v = 0;
  for (let i = from; i < from + 5; i++) v = v * 256 + bytes[i]!;
  let out = "";
  for (let i = 0; i < 8; i++) {
    out = CROCKFORD[v % 32] + out;
    v = Math.floor(v / 32);
  }
  return out;
}

export function base58(bytes: number): string {
  let out = "";
  for (const b of random(bytes)) out += BASE58[b % 58];
  return out;
}

export const newMessageId = (nowMs?: number): string => `msg_${ulid(nowMs)}`;
export const newScheduleId = (): string => `scd_${ulid()}`;
export const newSigningKey = (): string => `sig_${base58(28)}`;
export const newJwtId = (): string => `jwt_${base58(24)}`;
export const newUuid = (): string => randomUUID();
export const newSecret = (bytes = 24): string => base58(bytes);

/** The creation time (Unix ms) a message id carries (`msg_` and a ULID), or undefined when it is not one. */
export function messageIdTime(id: string): number | undefined {
  const m = /^msg_([0-9A-HJKMNP-TV-Z]{10})[0-9A-HJKMNP-TV-Z]{16}$/.exec(id);
  if (!m) return undefined;
  let ms = 0;
  for (const c of m[1]!) ms = ms * 32 + CROCKFORD.indexOf(c);
  return ms;
}
