/**
 * Byte bounds of a page of logs or DLQ entries (docs/reliability.md, "Page size"). Entries embed message and
 * response bodies, so without a bound one page of 100 entries with 10 MB bodies would be a gigabyte:
 * - every body in a page is cut to `PAGE_BODY_MAX_BYTES` (base64 text on a 4-character boundary, so it still
 *   decodes; UTF-8 text never in the middle of a character); the whole body stays readable one entry at a time;
 * - entries are added to a page while it stays within `PAGE_MAX_BYTES`; the first entry always fits (its bodies are
 *   cut), and a page cut short ends with a cursor at its last entry, so nothing is skipped.
 * The http layer applies the rule to its records (src/http/views/page-budget.ts): which fields are bodies, and the
 * size of a record as JSON.
 */
export const PAGE_MAX_BYTES = 2 * 1024 * 1024;
export const PAGE_BODY_MAX_BYTES = 256 * 1024;

/** A body cut to the bound, or undefined when it is within it. */
export function cutBody(text: string, base64: boolean): string | undefined {
  if (Buffer.byteLength(text, "utf8") <= PAGE_BODY_MAX_BYTES) return undefined;
  return base64 ? text.slice(0, PAGE_BODY_MAX_BYTES - (PAGE_BODY_MAX_BYTES % 4)) : cutUtf8(text, PAGE_BODY_MAX_BYTES);
}

/** The longest prefix of `text` within `maxBytes` of UTF-8 that does not end in a split character. */
function cutUtf8(text: string, maxBytes: number): string {
  const cut = Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8");
  return cut.endsWith("\uFFFD") ? cut.slice(0, -1) : cut;
}

/**
 * Turns entries into records until the page's byte budget is spent (`sizeOf`: a record's bytes, its separator
 * included; the page's own framing counts 2). `cursor` is the store's cursor when every entry fit, or the seq of the
 * last record included when the page was cut short (and more entries follow).
 */
export function fitPage<T, R>(
  entries: readonly T[],
  toRecord: (entry: T) => R,
  sizeOf: (record: R) => number,
  seqOf: (entry: T) => string | undefined,
  storeCursor: string | undefined,
): { records: R[]; cursor: string | undefined } {
  const records: R[] = [];
  let bytes = 2;
  for (const [i, entry] of entries.entries()) {
    const record = toRecord(entry);
    const size = sizeOf(record);
    const seq = i > 0 ? seqOf(entries[i - 1]!) : undefined;
    if (records.length > 0 && bytes + size > PAGE_MAX_BYTES && seq !== undefined) return { records, cursor: seq };
    records.push(record);
    bytes += size;
  }
  return { records, cursor: storeCursor };
}
