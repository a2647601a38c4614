import { randomInt } from "node:crypto";
import { newSecret, newUuid } from "../domain/ids.js";
import { goTimeString, periodWindow, type StatsPeriod } from "../domain/stats-period.js";
import { endpointSlug, type SearchIndex, type SearchRegion, type SearchType } from "../domain/search.js";
import { notFound } from "../errors.js";
import type { Customer } from "../domain/records.js";
import type { Services } from "./context.js";
import { searchUsage } from "./search-usage.js";
import type { SearchUsageKind } from "../store/search-document-store.js";

/**
 * Search-index use cases (docs/management.md "Search indexes"). Every lookup is scoped to the customer: another's id is
 * a 404.
 */

/** A new index as the management API names it (parsed by src/http/bodies/search-indexes.ts). */
export interface NewSearchIndex {
  name: string;
  region: SearchRegion;
  type: SearchType;
}

const newIndexToken = (): string => newSecret(40);

/** `origin` is where this server is reached (from the request), so the endpoint is where Ferry serves the index. */
export async function createSearchIndex(
  services: Services,
  customer: Customer,
  { name, region, type }: NewSearchIndex,
  origin: string,
): Promise<SearchIndex> {
  const index: SearchIndex = {
    id: newUuid(),
    customerId: customer.email,
    name,
    endpoint: `${origin}/search/${endpointSlug(region, (n) => randomInt(n))}`,
    type,
    region,
    partnerEmail: "",
    token: newIndexToken(),
    readOnlyToken: newIndexToken(),
    inputEnrichmentEnabled: false,
    creationTime: Math.floor(services.clock.now() / 1000),
  };
  await services.store.searchIndexInsert({ index });
  return index;
}

export function listSearchIndexes(services: Services, customer: Customer): Promise<SearchIndex[]> {
  return services.store.searchIndexList({ customerId: customer.email });
}

export async function getSearchIndex(services: Services, customer: Customer, id: string): Promise<SearchIndex> {
  const index = await services.store.searchIndexGet({ customerId: customer.email, id });
  if (!index) throw notFound(`search index ${id}`);
  return index;
}

export async function deleteSearchIndex(services: Services, customer: Customer, id: string): Promise<void> {
  if (!(await services.store.searchIndexDelete({ customerId: customer.email, id }))) {
    throw notFound(`search index ${id}`);
  }
}

export async function renameSearchIndex(
  services: Services,
  customer: Customer,
  id: string,
  name: string,
): Promise<SearchIndex> {
  const index = await services.store.searchIndexUpdate({ customerId: customer.email, id, patch: { name } });
  if (!index) throw notFound(`search index ${id}`);
  return index;
}

/** New `token` and `read_only_token`; the old ones stop being valid. */
export async function resetSearchIndexPassword(services: Services, customer: Customer, id: string) {
  const index = await services.store.searchIndexUpdate({
    customerId: customer.email,
    id,
    patch: { token: newIndexToken(), readOnlyToken: newIndexToken() },
  });
  if (!index) throw notFound(`search index ${id}`);
  return index;
}

/** Data-plane operations (document writes, queries) per step of `period`, as `{x: "<time> +0000 UTC", y}` points. */
export async function searchIndexThroughput(services: Services, index: SearchIndex, period: StatsPeriod = "1h") {
  const win = periodWindow(period, services.clock.now());
  const usage = searchUsage(services.store);
  const counts = await usage.consistently(async () => {
    const stored = await services.store.searchUsageSeries({
      indexId: index.id,
      from: win.from,
      stepMs: win.stepMs,
      count: win.points,
    });
    for (const b of usage.bufferedMinutes(index.id)) {
      const i = Math.floor((b.minute - win.from) / win.stepMs);
      if (i >= 0 && i < stored.length) stored[i]! += b.n;
    }
    return stored;
  });
  return counts.map((y, i) => ({ x: goTimeString(win.from + i * win.stepMs), y }));
}

const DAY_MS = 86_400_000;

/** What the index holds and what it did: document counts, size, today's and this month's counters, throughput. */
export async function searchIndexStats(services: Services, index: SearchIndex, period: StatsPeriod) {
  const now = services.clock.now();
  const month = new Date(now);
  const monthStart = Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1);
  const day = now - (now % DAY_MS);
  const info = await services.store.searchDocInfo({ indexId: index.id });
  const usage = searchUsage(services.store);
  const today = (kind: SearchUsageKind, since: number) =>
    usage.consistently(
      async () =>
        (await services.store.searchUsageSum({ indexId: index.id, kind, since })) + usage.buffered(index.id, kind, since),
    );
  return {
    vector_count: info.namespaces.reduce((sum, n) => sum + n.documents, 0),
    pending_vector_count: 0,
    index_size: info.bytes,
    dimension: info.embedder?.dimension ?? 0,
    embedder: info.embedder?.name ?? "",
    namespaces: Object.fromEntries(info.namespaces.map((n) => [n.namespace, n.documents])),
    daily_updates: await today("update", day),
    daily_queries: await today("query", day),
    monthly_reranks: await today("rerank", monthStart),
    monthly_bandwidth: await today("bandwidth", monthStart),
    throughput: await searchIndexThroughput(services, index, period),
  };
}
