import type { Query } from "../query.js";
import { bodyAsQuery } from "./filters.js";

/**
 * The JSON body of a bulk DLQ delete or retry (the Python and Go SDKs): the same keys as the query, `dlqIds` an array
 * of ids (docs/dlq.md). Read as a query, so the DLQ's query readers apply to it.
 */
export function dlqBodyQuery(body: Record<string, unknown>): Query {
  return bodyAsQuery(body, { dlqIds: "must be an array of dlq ids" });
}
