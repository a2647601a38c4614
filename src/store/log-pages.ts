import type { LogDetails } from "../domain/log.js";
import { seqCursor } from "./pages.js";
import { type LogRow, logFromRow } from "./rows-shared.js";
import type { LogRecord } from "./store.js";

/**
 * A page of the log list (Store.logList), shared by both adapters: they select up to `count + 1` rows (one more
 * tells whether a next page exists: pages.ts, as every list of the store) and, for the entries that are not CREATED,
 * the CREATED entries' details. Each entry shows the message as published; that lives once, on its CREATED entry.
 */
export function logPageOf(rows: readonly LogRow[], count: number): { page: LogRecord[]; needCreated: string[] } {
  const page = rows.slice(0, count).map(logFromRow) as LogRecord[];
  const needCreated = [...new Set(page.filter((e) => e.state !== "CREATED").map((e) => e.messageId))];
  return { page, needCreated };
}

/**
 * Merges the CREATED details in (`created`: undefined when none were needed) and sets the cursor when more rows
 * than `count` were read.
 */
export function completeLogPage(
  page: LogRecord[],
  created: readonly { message_id: string; details: string }[] | undefined,
  more: boolean,
): { logs: LogRecord[]; cursor?: string } {
  if (created) {
    const byId = new Map(created.map((c) => [c.message_id, JSON.parse(c.details) as LogDetails]));
    for (const e of page) if (e.state !== "CREATED") e.created = byId.get(e.messageId);
  }
  const cursor = seqCursor(page, more);
  return cursor === undefined ? { logs: page } : { logs: page, cursor };
}
