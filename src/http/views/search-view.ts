import { type SearchIndex, searchLimits } from "../../domain/search.js";
import type { Dialect } from "../../domain/dialect.js";

/**
 * The search-index record of docs/management.md "Search indexes", every field, in its order; the partner e-mail field
 * follows the dialect.
 */
export function searchIndexRecord(
  index: SearchIndex,
  dialect: Dialect,
  throughput: { x: string; y: number }[] = [],
): Record<string, unknown> {
  return {
    customer_id: index.customerId,
    id: index.id,
    name: index.name,
    endpoint: index.endpoint,
    type: index.type,
    region: index.region,
    [dialect.partnerEmailField]: index.partnerEmail,
    token: index.token,
    read_only_token: index.readOnlyToken,
    ...searchLimits[index.type],
    creation_time: index.creationTime,
    input_enrichment_enabled: index.inputEnrichmentEnabled,
    // Operations (upserts, deletes, queries) per minute of the last hour, from the data plane's counters.
    throughput_vector: throughput,
  };
}
