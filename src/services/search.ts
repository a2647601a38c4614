import { randomInt } from "node:crypto";
import { newSecret, newUuid } from "../domain/ids.js";
import {
  endpointSlug,
  type SearchIndex,
  type SearchRegion,
  type SearchType,
  searchRegions,
  searchTypes,
} from "../domain/search.js";
import { invalidField, notFound } from "../errors.js";
import type { Customer } from "../store/management-store.js";
import type { Services } from "./context.js";

/** Search-index use cases (reference §10.1). Every lookup is scoped to the customer: another's id is a 404. */

const MAX_NAME = 256;

function requiredName(value: unknown): string {
  if (value === undefined || value === null) throw invalidField("name", "is required");
  if (typeof value !== "string" || value.trim() === "") throw invalidField("name", "must be a non-empty string");
  if (value.length > MAX_NAME) throw invalidField("name", `must be at most ${MAX_NAME} characters`);
  return value;
}

function requiredEnum<T extends string>(body: Record<string, unknown>, field: string, allowed: readonly T[]): T {
  const value = body[field];
  if (value === undefined || value === null) throw invalidField(field, `is required (one of ${allowed.join(", ")})`);
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw invalidField(field, `${JSON.stringify(value)} must be one of ${allowed.join(", ")}`);
  }
  return value as T;
}

const newIndexToken = (): string => newSecret(40);

/** `origin` is where this server is reached (from the request), so the endpoint is where Ferry serves the index. */
export async function createSearchIndex(
  services: Services,
  customer: Customer,
  body: Record<string, unknown>,
  origin: string,
): Promise<SearchIndex> {
  const name = requiredName(body.name);
  const region = requiredEnum<SearchRegion>(body, "region", searchRegions);
  const type = requiredEnum<SearchType>(body, "type", searchTypes);
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
  body: Record<string, unknown>,
): Promise<SearchIndex> {
  const name = requiredName(body.name);
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
