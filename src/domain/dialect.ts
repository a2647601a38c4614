import { invalidField } from "../errors.js";
import { boundedMemo } from "./bounded-memo.js";
import { canonicalHeaderName } from "./headers.js";

/** The two vocabularies Ferry speaks, both at once on one server (docs/messaging.md "Dialects"). */
export type DialectName = "neutral" | "upstash";

export const DIALECT_NAMES: readonly DialectName[] = ["neutral", "upstash"];

/**
 * Every name the seed neutralised lives here (docs/messaging.md "Dialects"). The dialect changes names only;
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
  readonly partnerEmailField: "partner_email" | "vercel_email";
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

/** Both dialects of one server, and the one that names what no request decided (FERRY_DIALECT). */
export interface Dialects {
  /** FERRY_DIALECT: the names of a request that used none of either, and of what no publisher decided. */
  readonly default: Dialect;
  /** Every dialect, the default first. */
  readonly all: readonly Dialect[];
  /**
   * The dialect a record was published in (`MessageSpec.dialect`). A record written before dialects were per
   * message has none: it was published in the server's dialect, the default.
   */
  of(name: DialectName | undefined): Dialect;
}

export function dialectsFor(defaultName: DialectName, version: string): Dialects {
  const byName = new Map(DIALECT_NAMES.map((n) => [n, dialectFor(n, version)] as const));
  const fallback = byName.get(defaultName)!;
  return {
    default: fallback,
    all: [fallback, ...[...byName.values()].filter((d) => d !== fallback)],
    of: (name) => (name === undefined ? fallback : (byName.get(name) ?? fallback)),
  };
}

/** Where a request used a name: what a refusal says before the name (`invalid header Svc-Retries: …`). */
export type NamePlace = "header" | "query parameter" | "path";

/** What a request's names decided: the dialect and the first name that decided it. */
export interface DialectChoice {
  readonly dialect: Dialect;
  /** `header Upstash-Delay`, `query parameter svc_token`, `path /v2/qstash/…`; absent: nothing decided (default). */
  readonly decidedBy?: string;
}

/** The dialect whose name this is, if any: a prefixed header, a prefixed or token query key, a management path. */
export function dialectOfName(dialects: Dialects, place: NamePlace, name: string): Dialect | undefined {
  const lower = name.toLowerCase();
  return dialects.all.find((d) => {
    if (place === "header") return lower.startsWith(d.prefixLower);
    if (place === "query parameter") return lower === d.tokenQuery || lower.startsWith(d.prefixLower);
    const segment = `/v2/${d.managementSegment}`;
    return lower === segment || lower.startsWith(`${segment}/`) || lower.startsWith(`${segment}?`);
  });
}

/** A name as a refusal shows it: a header in canonical case; a key with blanks, a colon or a quote quoted. */
const shown = (place: NamePlace, name: string): string =>
  place === "header"
    ? `header ${canonicalHeaderName(name)}`
    : `${place} ${/^[^\s:"]+$/.test(name) ? name : JSON.stringify(name)}`;

/**
 * Decides a request's dialect from the names it used (docs/messaging.md "Dialects"): the first name of either
 * dialect decides; a name of the other dialect in the same request is refused with a 400 naming both, so a mixed
 * request is never half ignored. `earlier` continues a decision (a batch item inside its request). Nothing decided:
 * the default, with no `decidedBy`.
 */
export function chooseDialect(
  dialects: Dialects,
  names: Iterable<readonly [NamePlace, string]>,
  earlier?: DialectChoice,
): DialectChoice {
  let choice: DialectChoice = earlier ?? { dialect: dialects.default };
  for (const [place, name] of names) {
    const d = dialectOfName(dialects, place, name);
    if (d === undefined) continue;
    if (choice.decidedBy === undefined) choice = { dialect: d, decidedBy: shown(place, name) };
    else if (d !== choice.dialect) {
      throw invalidField(
        shown(place, name),
        `mixes two dialects: this request also uses ${choice.decidedBy}; use either the ${choice.dialect.prefix}… ` +
          `or the ${d.prefix}… names (docs/messaging.md "Dialects")`,
      );
    }
  }
  return choice;
}

/**
 * A name of any dialect in `to`'s spelling (lower case): `svc-retries` → `upstash-retries`. URL-group default
 * headers are stored as they were set and apply to publishes in either dialect.
 */
export function inDialect(dialects: Dialects, lowerName: string, to: Dialect): string {
  const from = dialects.all.find((d) => lowerName.startsWith(d.prefixLower));
  return from === undefined || from === to ? lowerName : to.prefixLower + lowerName.slice(from.prefixLower.length);
}
