import type { DlqEntry } from "../../domain/records.js";
import { messageRecord, put, putBody } from "./message-view.js";

/**
 * A DLQ record (docs/dlq.md): the message record plus the DLQ id and the last failed attempt's response.
 * `responseStatus` is always present (the Python SDK requires it): 0 when the attempt got no HTTP answer.
 */
export function dlqRecord(e: DlqEntry): Record<string, unknown> {
  const out = messageRecord(e.message);
  out.dlqId = e.dlqId;
  out.responseStatus = e.response.status ?? 0;
  put(out, "responseHeader", e.response.headers);
  putBody(out, "responseBody", e.response.body);
  return out;
}
