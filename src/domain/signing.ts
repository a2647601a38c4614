import { createHash, createHmac } from "node:crypto";
import { newJwtId } from "./ids.js";

/**
 * The `Svc-Signature` JWT (docs/messaging.md "Signing keys"): HS256 over the UTF-8 bytes of the signing key itself,
 * claims iss, sub (the exact target URL), iat, exp = iat + 300, nbf = 0 (present), jti, body.
 * Written on node:crypto rather than jose because it runs once per delivery attempt and jose's WebCrypto path
 * costs an async key import per call; the tests verify every signature with jose.
 */
const HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");

export function bodyHash(body: Buffer | undefined): string {
  return createHash("sha256")
    .update(body ?? Buffer.alloc(0))
    .digest("base64url");
}

export function signDelivery(p: {
  key: string;
  issuer: string;
  url: string;
  body: Buffer | undefined;
  nowMs: number;
}): string {
  const iat = Math.floor(p.nowMs / 1000);
  const claims = { iss: p.issuer, sub: p.url, iat, exp: iat + 300, nbf: 0, jti: newJwtId(), body: bodyHash(p.body) };
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  const signature = createHmac("sha256", p.key).update(`${HEADER}.${payload}`).digest("base64url");
  return `${HEADER}.${payload}.${signature}`;
}
