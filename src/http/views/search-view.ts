import { type SearchIndex, searchLimits } from "../../domain/search.js";
import type { Dialect } from "../../domain/dialect.js";
import type { UsagePoint } from "../schemas/management.js";
import type { SearchIndexRecord } from "../schemas/search.js";

/**
 * The search-index record of docs/management.md "Search indexes", every field, in its order; the partner e-mail field
 * follows the dialect.
 */
export function searchIndexRecord(index: SearchIndex, dialect: Dialect, throughput: UsagePoint[] = []): SearchIndexRecord {
  const partner: Pick<SearchIndexRecord, Dialect["partnerEmailField"]> = {};
  partner[dialect.partnerEmailField] = index.partnerEmail;
  return {
    customer_id: index.customerId,
    id: index.id,
    name: index.name,
    endpoint: index.endpoint,
    type: index.type,
    region: index.region,
    ...partner,
    token: index.token,
    read_only_token: index.readOnlyToken,
    ...searchLimits[index.type],
    creation_time: index.creationTime,
    input_enrichment_enabled: index.inputEnrichmentEnabled,
    // Operations (upserts, deletes, queries) per minute of the last hour, from the data plane's counters.
    throughput_vector: throughput,
  };
}
