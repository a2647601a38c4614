import type { Dialect } from "../domain/dialect.js";
import type { ConfigSource } from "../domain/publish-config.js";
import { parsePublishConfig } from "../domain/publish-config.js";
import { specToConfigHeaders } from "../domain/spec-headers.js";
import { notFound } from "../errors.js";
import type { Account, DlqEntry } from "../domain/records.js";
import type { DlqFilter } from "../store/store-dlq.js";
import type { InsertItem, Order } from "../store/store.js";
import type { Services } from "./context.js";
import { buildMessages } from "./publish.js";

/** Dead letter queue use cases (docs/dlq.md). */

export function listDlq(
  services: Services,
  account: Account,
  p: { filter: DlqFilter; cursor?: string; count: number; order: Order },
) {
  return services.store.dlqList({ accountId: account.id, ...p });
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

/**
 * The retry request's own configuration (docs/dlq.md "Retry"), in the names it used. The retried message keeps the
 * dialect its original was published in (docs/messaging.md "Dialects").
 */
export interface RetryOverrides {
  source: ConfigSource;
  dialect: Dialect;
}

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
  const { dialect } = overrides;
  const limits = services.plans.limitsOf(account);
  const now = clock.now();
  const items: InsertItem[] = entries.map((entry) => {
    const m = entry.message;
    // The original's configuration in the request's names, so that the request's own headers override it.
    const source = overlay(specToConfigHeaders(m.spec, dialect.prefixLower), overrides.source, dialect.prefixLower);
    const parsed = parsePublishConfig(source, dialect, limits, now);
    parsed.spec.dialect = services.dialects.of(m.spec.dialect).name;
    const input: Parameters<typeof buildMessages>[0] = {
      account,
      destination: m.url,
      // The stored spec and body hold the original values: redacted fields are redacted in views only.
      body: m.body ?? Buffer.alloc(0),
      callerIp: m.callerIp ?? "",
    };
    if (m.queueName !== undefined) input.queueName = m.queueName;
    if (m.scheduleId !== undefined) input.scheduleId = m.scheduleId;
    const target: { url: string; topicName?: string; endpointName?: string } = { url: m.url };
    if (m.topicName !== undefined) target.topicName = m.topicName;
    if (m.endpointName !== undefined) target.endpointName = m.endpointName;
    const [built] = buildMessages(input, [target], { ...parsed, contentBasedDedup: false }, now);
    const message = built!.message;
    delete message.dedupId;
    if (m.callerIp === undefined) delete message.callerIp;
    // A retried callback is still a callback (it gets no callbacks of its own), but no longer holds a queue slot.
    message.kind = m.kind;
    return { message, dedupKey: `dlq:${entry.dlqId}` };
  });
  const results = await store.messageInsertMany({ items, now, dedupWindowMs: config.dedupWindowMs });
  await store.dlqDelete({ accountId: account.id, filter: { dlqIds: entries.map((e) => e.dlqId) } });
  for (const r of results) {
    if (!r.message) continue;
    if (r.message.dueAt <= now) dispatcher.nudge();
    else dispatcher.noteDue(r.message.dueAt);
  }
  return results.map((r) => ({ messageId: r.messageId, deduplicated: r.deduplicated }));
}

/** The retry request's own `Svc-*` headers (and `svc-*` query keys) win over the original's configuration. */
function overlay(original: ConfigSource["headers"], request: ConfigSource, prefixLower: string): ConfigSource {
  // Null prototype: a header named `__proto__` is a name, not the object's prototype (docs/reliability.md).
  const headers: ConfigSource["headers"] = Object.assign(Object.create(null) as ConfigSource["headers"], original);
  for (const [key, value] of request.query) headers[key] = value;
  for (const [key, value] of Object.entries(request.headers)) {
    if (value !== undefined && key.startsWith(prefixLower)) headers[key] = value;
  }
  return { headers, query: new Map() };
}
