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
  let rnd: Buffer;
  if (nowMs <= lastMs) {
    rnd = Buffer.from(lastRandom);
    for (let i = rnd.length - 1; i >= 0; i--) {
      rnd[i] = (rnd[i]! + 1) & 0xff;
      if (rnd[i] !== 0) break;
    }
    nowMs = lastMs;
  } else {
    rnd = Buffer.from(random(10));
  }
  lastMs = nowMs;
  lastRandom = rnd;
  let time = "";
  let t = nowMs;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let bits = 0n;
  for (const b of rnd) bits = (bits << 8n) | BigInt(b);
  let rest = "";
  for (let i = 0; i < 16; i++) {
    rest = CROCKFORD[Number(bits & 31n)] + rest;
    bits >>= 5n;
  }
  return time + rest;
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
