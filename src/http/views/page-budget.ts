import { cutBody, fitPage } from "../../domain/page-budget.js";

/**
 * The page budget of src/domain/page-budget.ts (docs/reliability.md, "Page size") applied to wire records: which
 * fields are bodies, and a record's size as JSON.
 */

type Json = Record<string, unknown>;

/** Cuts the named string fields of a record to the body bound, flagging each cut field `<field>Truncated: true`. */
export function truncateBodies(record: Json, fields: readonly string[], base64Fields: readonly string[]): Json {
  for (const field of [...fields, ...base64Fields]) {
    const value = record[field];
    if (typeof value !== "string") continue;
    const cut = cutBody(value, base64Fields.includes(field));
    if (cut === undefined) continue;
    record[field] = cut;
    record[`${field.replace(/Base64$/, "")}Truncated`] = true;
  }
  return record;
}

/** A page of wire records within the page's byte bound, with its cursor (fitPage of src/domain/page-budget.ts). */
export function fitJsonPage<T>(
  entries: readonly T[],
  toRecord: (entry: T) => Json,
  seqOf: (entry: T) => string | undefined,
  storeCursor: string | undefined,
): { records: Json[]; cursor: string | undefined } {
  return fitPage(entries, toRecord, (record) => Buffer.byteLength(JSON.stringify(record), "utf8") + 1, seqOf, storeCursor);
}
