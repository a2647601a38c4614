/**
 * Cursor pages, shared by every list of the store (logs, DLQ entries, message rows, workflow runs) and both adapters:
 * an adapter selects up to `count + 1` rows ordered by `seq` after the cursor (one more tells whether a next page
 * exists), and the page is its first `count` rows, with a cursor, the last one's `seq`, only when more follow. Each
 * adapter writes only the SQL (`seq > cursor` or `seq < cursor` by order, `LIMIT count + 1`).
 */

/** The cursor after `page`: its last row's seq when `more` rows follow, else none (never an empty page's). */
export function seqCursor(page: readonly { seq: number | string }[], more: boolean): string | undefined {
  return more && page.length > 0 ? String(page[page.length - 1]!.seq) : undefined;
}

/** A page of rows read with one more than `count`: the first `count` rows, and the cursor when more follow. */
export function seqPage<R extends { seq: number | string }>(
  rows: readonly R[],
  count: number,
): { page: R[]; cursor?: string } {
  const page = rows.slice(0, count);
  const cursor = seqCursor(page, rows.length > count);
  return cursor === undefined ? { page } : { page, cursor };
}
