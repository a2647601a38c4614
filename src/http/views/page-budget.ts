/**
 * Byte bounds of a page of logs or DLQ entries (docs/reliability.md, "Page size"). Entries embed message and
 * response bodies, so without a bound one page of 100 entries with 10 MB bodies would be a gigabyte:
 * - every body field in a page is cut to `PAGE_BODY_MAX_BYTES` (base64 text is cut on a 4-character boundary, so it
 *   still decodes) and flagged `<field>Truncated: true`; the whole body stays readable one entry at a time
 *   (`GET /v2/dlq/{dlqId}`, `GET /v2/messages/{id}`);
 * - entries are added to a page while its JSON stays within `PAGE_MAX_BYTES`; the first entry always fits (its
 *   bodies are cut), and a page cut short ends with a cursor at its last entry, so nothing is skipped.
 */
export const PAGE_MAX_BYTES = 2 * 1024 * 1024;
export const PAGE_BODY_MAX_BYTES = 256 * 1024;

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
    if (typeof value !== "string" || Buffer.byteLength(value, "utf8") <= PAGE_BODY_MAX_BYTES) continue;
    r[field] = base64Fields.includes(field)
      ? value.slice(0, PAGE_BODY_MAX_BYTES - (PAGE_BODY_MAX_BYTES % 4))
      : cutUtf8(value, PAGE_BODY_MAX_BYTES);
    if (field === "body" || field === "bodyBase64") r.bodyTruncated = true;
    else r.responseBodyTruncated = true;
  }
  return record;
}

/** The longest prefix of `text` within `maxBytes` of UTF-8 that does not end in a split character. */
function cutUtf8(text: string, maxBytes: number): string {
  const cut = Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8");
  return cut.endsWith("\uFFFD") ? cut.slice(0, -1) : cut;
}

/**
 * Turns entries into records until the page's byte budget is spent. `cursor` is the store's cursor when every entry
 * fit, or the seq of the last record included when the page was cut short (and more entries follow).
 */
export function fitPage<T, R>(
  entries: readonly T[],
  toRecord: (entry: T) => R,
  seqOf: (entry: T) => string | undefined,
  storeCursor: string | undefined,
): { records: R[]; cursor: string | undefined } {
  const records: R[] = [];
  let bytes = 2;
  for (const [i, entry] of entries.entries()) {
    const record = toRecord(entry);
    const size = Buffer.byteLength(JSON.stringify(record), "utf8") + 1;
    const seq = i > 0 ? seqOf(entries[i - 1]!) : undefined;
    if (records.length > 0 && bytes + size > PAGE_MAX_BYTES && seq !== undefined) return { records, cursor: seq };
    records.push(record);
    bytes += size;
  }
  return { records, cursor: storeCursor };
}
