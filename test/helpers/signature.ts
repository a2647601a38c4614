import { createHash } from "node:crypto";
import { jwtVerify } from "jose";

/** Verifies a delivery's signature exactly as a receiver would (reference §8), with jose. */
export async function verifySignature(p: {
  signature: string | string[] | undefined;
  key: string;
  url: string;
  body: Buffer;
  issuer?: string;
}): Promise<Record<string, unknown>> {
  if (typeof p.signature !== "string") throw new Error("missing signature header");
  const { payload, protectedHeader } = await jwtVerify(p.signature, new TextEncoder().encode(p.key), {
    issuer: p.issuer ?? "Ferry",
  });
  if (protectedHeader.alg !== "HS256") throw new Error(`alg ${protectedHeader.alg}`);
  if (payload.sub !== p.url) throw new Error(`sub ${String(payload.sub)} is not ${p.url}`);
  const expected = createHash("sha256").update(p.body).digest("base64url");
  if (String(payload.body).replace(/=+$/, "") !== expected) throw new Error("body hash mismatch");
  return payload as Record<string, unknown>;
}
