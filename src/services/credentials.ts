import { createHash, randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { newSecret } from "../domain/ids.js";

/**
 * Management API keys are stored as salted scrypt hashes, never in clear. Why scrypt and not a salted SHA-256:
 * FERRY_ADMIN_API_KEY is chosen by an operator and may be short, and scrypt makes an offline guess from a leaked
 * database file cost ~35 ms of CPU and 16 MiB instead of nanoseconds. scrypt runs on libuv's thread pool, so it does
 * not block the event loop. Parameters are stored with each hash so they can be raised later.
 */
const N = 16_384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

function derive(key: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(key, salt, KEY_LENGTH, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (error, derived) =>
      error ? reject(error) : resolve(derived),
    ),
  );
}

/** A generated API key: 32 random base58 characters (~187 bits). */
export const newApiKey = (): string => `key_${newSecret(32)}`;

/** `scrypt$N$r$p$<salt base64>$<hash base64>` */
export async function hashApiKey(key: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(key, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64")}$${hash.toString("base64")}`;
}

/**
 * Keys already verified by scrypt in this process, as SHA-256 digests keyed by the stored hash: a client sending
 * the same key again costs one SHA-256 instead of one scrypt. Memory only; a changed stored hash misses the cache.
 */
const verified = new Map<string, Buffer>();
const MAX_VERIFIED = 10_000;

const sha256 = (value: string): Buffer => createHash("sha256").update(value).digest();

/** Compares in constant time (timingSafeEqual over equal-length digests). */
export async function verifyApiKey(key: string, stored: string): Promise<boolean> {
  const known = verified.get(stored);
  if (known !== undefined) return timingSafeEqual(known, sha256(key));
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, "base64");
  const actual = await derive(key, Buffer.from(salt, "base64"), Number(n), Number(r), Number(p));
  const ok = actual.length === expected.length && timingSafeEqual(actual, expected);
  if (ok) {
    if (verified.size >= MAX_VERIFIED) verified.clear();
    verified.set(stored, sha256(key));
  }
  return ok;
}

/** A hash no key matches, verified against when the e-mail is unknown so timing does not reveal which e-mails exist. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashApiKey(newSecret(32));
  return decoy;
}
