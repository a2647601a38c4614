import { notFound } from "../errors.js";
import type { Account, DlqEntry } from "../domain/records.js";
import type { DlqFilter } from "../store/dlq-store.js";
import type { InsertItem, Order } from "../store/store.js";
import type { Services } from "./context.js";
import { republishedMessage, type RetryOverrides } from "./republish.js";

/** Dead letter queue use cases (docs/dlq.md). */

export function listDlq(
  services: Services,
  account: Account,
  p: { filter: DlqFilter; cursor?: string; count: number; order: Order },
) {
  return services.store.dlqList({ accountId: account.id, ...p });
}

/** How many entries match the filter (`GET /v2/dlq/count`). */
export function countDlq(services: Services, account: Account, filter: DlqFilter): Promise<number> {
  return services.store.dlqCount({ accountId: account.id, filter });
}

export async function getDlq(services: Services, account: Account, dlqId: string): Promise<DlqEntry> {
  const entry = await services.store.dlqGet({ accountId: account.id, dlqId });
  if (!entry) throw notFound(`dlq message ${dlqId}`);
  return entry;
}

/** Deletes one entry; 404 when it is unknown or already gone (the second delete fails). */
export async function deleteDlq(services: Services, account: Account, dlqId: string): Promise<void> {
  const { deleted } = await services.store.dlqDelete({ accountId: account.id, filter: { dlqIds: [dlqId] } });
  if (deleted === 0) throw notFound(`dlq message ${dlqId}`);
}

/** Bulk delete: counts only the entries found. Without `count` every matching entry goes. */
export function deleteDlqMany(
  services: Services,
  account: Account,
  p: { filter: DlqFilter; count?: number; cursor?: string },
) {
  return services.store.dlqDelete({ accountId: account.id, ...p });
}

export type { RetryOverrides } from "./republish.js";

export interface RetryResult {
  messageId: string;
  deduplicated: boolean;
}

/** Re-publishes one entry as a new message and removes the entry; 404 when it is unknown. */
export async function retryDlq(
  services: Services,
  account: Account,
  dlqId: string,
  overrides: RetryOverrides,
): Promise<RetryResult> {
  const entry = await getDlq(services, account, dlqId);
  const [result] = await retryEntries(services, account, [entry], overrides);
  return result!;
}

/**
 * Bulk retry: the given ids (404 naming the missing ones, and nothing retried, when some are unknown), or one page
 * of the filter's matches. `cursor` is "" when nothing more matches (the hosted service's wire form).
 */
export async function retryDlqMany(
  services: Services,
  account: Account,
  p: { filter: DlqFilter; count: number; cursor?: string },
  overrides: RetryOverrides,
): Promise<{ responses: RetryResult[]; cursor?: string }> {
  let entries: DlqEntry[];
  let cursor: string | undefined;
  if (p.filter.dlqIds) {
    const ids = [...new Set(p.filter.dlqIds)];
    const found = await Promise.all(ids.map((dlqId) => services.store.dlqGet({ accountId: account.id, dlqId })));
    const missing = ids.filter((_, i) => found[i] === undefined);
    if (missing.length > 0) throw notFound(`dlq messages ${missing.join(", ")}`);
    entries = found as DlqEntry[];
  } else {
    const q: Parameters<typeof listDlq>[2] = { filter: p.filter, count: p.count, order: "earliestFirst" };
    if (p.cursor !== undefined) q.cursor = p.cursor;
    const page = await listDlq(services, account, q);
    entries = page.entries;
    cursor = page.cursor;
  }
  if (entries.length === 0) return { responses: [] };
  const responses = await retryEntries(services, account, entries, overrides);
  return { responses, cursor: cursor ?? "" };
}

/**
 * Each entry becomes a new message through the publish insert path (durable before the answer, then handed to the
 * dispatcher), and the entries are deleted afterwards. The insert carries a deduplication key per DLQ id: if the
 * process dies between the insert and the delete, or two retries of one entry race, a second retry within the
 * deduplication window returns the same message instead of delivering twice.
 */
async function retryEntries(
  services: Services,
  account: Account,
  entries: DlqEntry[],
  overrides: RetryOverrides,
): Promise<RetryResult[]> {
  const { store, clock, config, dispatcher } = services;
  const now = clock.now();
  const items: InsertItem[] = entries.map((entry) => ({
    message: republishedMessage(services, account, entry.message, overrides, now, { keepSchedule: true }),
    dedupKey: `dlq:${entry.dlqId}`,
  }));
  const results = await store.messageInsertMany({ items, now, dedupWindowMs: config.dedupWindowMs });
  await store.dlqDelete({ accountId: account.id, filter: { dlqIds: entries.map((e) => e.dlqId) } });
  for (const r of results) {
    if (!r.message) continue;
    if (r.message.dueAt <= now) dispatcher.nudge();
    else dispatcher.noteDue(r.message.dueAt);
  }
  return results.map((r) => ({ messageId: r.messageId, deduplicated: r.deduplicated }));
}
