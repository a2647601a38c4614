import { timingSafeEqual } from "node:crypto";

/**
 * Compares a secret (a token) in time that does not depend on where the two differ, only on their lengths. Every
 * token compared outside the database goes through here: /metrics's token, a search index's tokens.
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
