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

type Json = Record<string, unknown>;

/** Cuts the named string fields of a record to the body bound, flagging each cut field. */
export function truncateBodies(record: Json, fields: readonly string[], base64Fields: readonly string[]): Json {
  for (const field of [...fields, ...base64Fields]) {
    const value = record[field];
    if (typeof value !== "string" || Buffer.byteLength(value, "utf8") <= PAGE_BODY_MAX_BYTES) continue;
    record[field] = base64Fields.includes(field)
      ? value.slice(0, PAGE_BODY_MAX_BYTES - (PAGE_BODY_MAX_BYTES % 4))
      : cutUtf8(value, PAGE_BODY_MAX_BYTES);
    record[`${field.replace(/Base64$/, "")}Truncated`] = true;
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
export function fitPage<T>(
  entries: readonly T[],
  toRecord: (entry: T) => Json,
  seqOf: (entry: T) => string | undefined,
  storeCursor: string | undefined,
): { records: Json[]; cursor: string | undefined } {
  const records: Json[] = [];
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
