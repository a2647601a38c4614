import type { MessageFilter } from "../../store/store.js";
import { intParam, messageFilterFromQuery } from "../query.js";
import { bodyAsQuery } from "./filters.js";

/** Bulk cancel's page size bound (docs/messaging.md "Cancel"). */
const MAX_CANCEL = 500;

/**
 * The JSON body of a bulk cancel (`DELETE /v2/messages`, the Python and Go SDKs): the message filters, `messageIds`
 * (an array of ids) and `count`.
 */
export function parseCancelBody(body: Record<string, unknown>): { filter: MessageFilter; count?: number } {
  const filter = messageFilterFromQuery(bodyAsQuery(body, { messageIds: "must be an array of message ids" }));
  if (body.count === undefined) return { filter };
  const count = intParam({ count: String(body.count) }, "count", 1, MAX_CANCEL);
  return count === undefined ? { filter } : { filter, count };
}
