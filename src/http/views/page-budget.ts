import { cutBody, fitPage } from "../../domain/page-budget.js";

/**
 * The page budget of src/domain/page-budget.ts (docs/reliability.md, "Page size") applied to wire records: which
 * fields are bodies, and a record's size as JSON.
 */

/** The body fields a page may cut, and the flags that say so. */
type BodyField = "body" | "bodyBase64" | "responseBody" | "responseBodyBase64";
export interface Truncatable {
  body?: string;
  bodyBase64?: string;
  responseBody?: string;
  responseBodyBase64?: string;
  bodyTruncated?: boolean;
  responseBodyTruncated?: boolean;
}

/** Cuts the named string fields of a record to the body bound, flagging each cut field (`<field>Truncated`). */
export function truncateBodies<T extends Truncatable>(
  record: T,
  fields: readonly BodyField[],
  base64Fields: readonly BodyField[],
): T {
  const r: Truncatable = record;
  for (const field of [...fields, ...base64Fields]) {
    const value = r[field];
    if (typeof value !== "string") continue;
    const cut = cutBody(value, base64Fields.includes(field));
    if (cut === undefined) continue;
    r[field] = cut;
    if (field === "body" || field === "bodyBase64") r.bodyTruncated = true;
    else r.responseBodyTruncated = true;
  }
  return record;
}

/** A page of wire records within the page's byte bound, with its cursor (fitPage of src/domain/page-budget.ts). */
export function fitJsonPage<T, R>(
  entries: readonly T[],
  toRecord: (entry: T) => R,
  seqOf: (entry: T) => string | undefined,
  storeCursor: string | undefined,
): { records: R[]; cursor: string | undefined } {
  return fitPage(entries, toRecord, (record) => Buffer.byteLength(JSON.stringify(record), "utf8") + 1, seqOf, storeCursor);
}
