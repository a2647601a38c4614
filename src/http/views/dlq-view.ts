import type { DlqEntry as DlqRow } from "../../domain/records.js";
import { type FailureKind, failureCause } from "../../domain/failure-cause.js";
import type { Same } from "../schemas/common.js";
import type { DlqEntry, FailureCause } from "../schemas/dlq.js";
import { messageRecord, textOrBase64 } from "./message-view.js";

/** The domain's failure kinds and the wire shape's are the same (a compile error otherwise). */
const kindsAgree: Same<FailureKind, FailureCause["kind"]> = true;
void kindsAgree;

/**
 * A DLQ record (docs/dlq.md): the message record plus the DLQ id and the last failed attempt's response.
 * `responseStatus` is always present (the Python SDK requires it): 0 when the attempt got no HTTP answer.
 * Added after the hosted service's fields (docs/dlq.md "Cause"): `failedAt` and `failureCause` (`kind`, a one-line
 * `summary` and the network `error` as recorded), so a list shows why without reading each body.
 */
export function dlqRecord(e: DlqRow): DlqEntry {
  const p: Parameters<typeof failureCause>[0] = { body: e.response.body };
  if (e.response.status !== undefined) p.status = e.response.status;
  if (e.response.error !== undefined) p.error = e.response.error;
  const cause: FailureCause = failureCause(p);
  // The network error as recorded (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9`), under the cause: a top-level
  // `error` would read as the hosted service's field of another meaning.
  if (e.response.error !== undefined && e.response.error !== "") cause.error = e.response.error;
  const out: DlqEntry = {
    ...messageRecord(e.message),
    dlqId: e.dlqId,
    responseStatus: e.response.status ?? 0,
    failedAt: e.failedAt,
    failureCause: cause,
  };
  if (Object.keys(e.response.headers).length > 0) out.responseHeader = e.response.headers;
  const body = textOrBase64(e.response.body);
  if (body.text !== undefined) out.responseBody = body.text;
  if (body.base64 !== undefined) out.responseBodyBase64 = body.base64;
  return out;
}
