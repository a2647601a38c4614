import { boundedMemo } from "./bounded-memo.js";

/** The two vocabularies Ferry speaks (FERRY_DIALECT, docs/configuration.md). */
export type DialectName = "neutral" | "upstash";

/**
 * Every name the seed neutralised lives here (docs/configuration.md FERRY_DIALECT). The dialect changes names only;
 * behaviour is identical. `neutral` speaks the seed's names; `upstash` speaks the names the official client SDKs use.
 */
export interface Dialect {
  readonly name: DialectName;
  /** Header prefix with its dash, canonical case: `Svc-`. */
  readonly prefix: string;
  /** Lower-case prefix, for matching incoming headers and query keys: `svc-`. */
  readonly prefixLower: string;
  /** Query parameter that may carry the token: `svc_token`. */
  readonly tokenQuery: string;
  /** Management path segment: `msgsvc` in `/v2/msgsvc/...`. */
  readonly managementSegment: string;
  /** Partner e-mail field of search indexes. */
  readonly partnerEmailField: string;
  /** JWT issuer of Svc-Signature. */
  readonly issuer: string;
  /** User-Agent of deliveries and callbacks. */
  readonly userAgent: string;
  /** Plan-name prefix of fixed tiers: `msgsvc_fixed_1m`. */
  readonly fixedPlanPrefix: string;
  /** `Svc-<Name>` in canonical case, for headers Ferry sends. */
  header(name: string): string;
  /** `svc-<name>` lower-cased, for headers and query keys Ferry reads. */
  key(name: string): string;
}

function make(
  name: DialectName,
  prefix: string,
  fields: Omit<Dialect, "name" | "prefix" | "prefixLower" | "header" | "key">,
): Dialect {
  const prefixLower = prefix.toLowerCase();
  return {
    name,
    prefix,
    prefixLower,
    ...fields,
    // Remembered: the delivery headers and the publish configuration ask for the same names for every message.
    header: boundedMemo((n) => prefix + n),
    key: boundedMemo((n) => prefixLower + n.toLowerCase()),
  };
}

export function dialectFor(name: DialectName, version: string): Dialect {
  if (name === "upstash") {
    return make("upstash", "Upstash-", {
      tokenQuery: "qstash_token",
      managementSegment: "qstash",
      partnerEmailField: "vercel_email",
      issuer: "Upstash",
      userAgent: "Upstash-QStash",
      fixedPlanPrefix: "qstash_fixed",
    });
  }
  return make("neutral", "Svc-", {
    tokenQuery: "svc_token",
    managementSegment: "msgsvc",
    partnerEmailField: "partner_email",
    issuer: "Ferry",
    userAgent: `Ferry/${version}`,
    fixedPlanPrefix: "msgsvc_fixed",
  });
}
