import type { DlqEntry } from "../../domain/records.js";
import { failureCause } from "../../domain/failure-cause.js";
import { messageRecord, put, putBody } from "./message-view.js";

/**
 * A DLQ record (docs/dlq.md): the message record plus the DLQ id and the last failed attempt's response.
 * `responseStatus` is always present (the Python SDK requires it): 0 when the attempt got no HTTP answer.
 * Added after the hosted service's fields (docs/dlq.md "Cause"): `failedAt` and `failureCause` (`kind`, a one-line
 * `summary` and the network `error` as recorded), so a list shows why without reading each body.
 */
export function dlqRecord(e: DlqEntry): Record<string, unknown> {
  const out = messageRecord(e.message);
  out.dlqId = e.dlqId;
  out.responseStatus = e.response.status ?? 0;
  put(out, "responseHeader", e.response.headers);
  putBody(out, "responseBody", e.response.body);
  out.failedAt = e.failedAt;
  const p: Parameters<typeof failureCause>[0] = { body: e.response.body };
  if (e.response.status !== undefined) p.status = e.response.status;
  if (e.response.error !== undefined) p.error = e.response.error;
  const cause: Record<string, unknown> = { ...failureCause(p) };
  // The network error as recorded (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9`), under the cause: a top-level
  // `error` would read as the hosted service's field of another meaning.
  put(cause, "error", e.response.error);
  out.failureCause = cause;
  return out;
}
