import { Cursor, HeaderMap, type Static, Type, UnixMs } from "./common.js";
import { MessageRecord } from "./messages.js";

/** Why the last attempt failed (docs/dlq.md "Cause"; src/domain/failure-cause.ts). */
export const FailureCause = Type.Object({
  kind: Type.Union([
    Type.Literal("http"),
    Type.Literal("refused"),
    Type.Literal("timeout"),
    Type.Literal("tls"),
    Type.Literal("dns"),
    Type.Literal("reset"),
    Type.Literal("egress"),
    Type.Literal("network"),
  ]),
  summary: Type.String({ description: "One line: `Connection refused`, `HTTP 500: …`" }),
  error: Type.Optional(Type.String({ description: "The network error as recorded" })),
});
export type FailureCause = Static<typeof FailureCause>;

/** A DLQ record (docs/dlq.md): the message record, the DLQ id and the last failed attempt's response. */
export const DlqEntry = Type.Object({
  ...MessageRecord.properties,
  dlqId: Type.String(),
  responseStatus: Type.Integer({ description: "0 when the attempt got no HTTP answer" }),
  responseHeader: Type.Optional(HeaderMap),
  responseBody: Type.Optional(Type.String()),
  responseBodyBase64: Type.Optional(Type.String()),
  failedAt: UnixMs,
  failureCause: FailureCause,
});
export type DlqEntry = Static<typeof DlqEntry>;

/** A workflow run's failure callback as a DLQ entry shows it (docs/workflows.md "DLQ"). */
export const FailureCallbackInfo = Type.Object({
  state: Type.String({ description: "CALLBACK_INPROGRESS, CALLBACK_SUCCESS, CALLBACK_FAIL or CALLBACK_CANCELED" }),
  responseStatus: Type.Optional(Type.Integer()),
  responseBody: Type.Optional(Type.String()),
  responseHeaders: Type.Optional(HeaderMap),
});

/** The run's fields a workflow step's entry carries in a list (docs/workflows.md "DLQ", contract §6.10). */
export const DlqRunFields = Type.Object({
  workflowRunId: Type.Optional(Type.String()),
  workflowUrl: Type.Optional(Type.String()),
  workflowCreatedAt: Type.Optional(UnixMs),
  label: Type.Optional(Type.String()),
  failureCallback: Type.Optional(Type.String()),
  failureCallbackInfo: Type.Optional(FailureCallbackInfo),
});
export type DlqRunFields = Static<typeof DlqRunFields>;

/** An entry of a page: bodies cut to the page's bound are flagged (src/http/views/page-budget.ts). */
export const DlqPageEntry = Type.Object({
  ...DlqEntry.properties,
  ...DlqRunFields.properties,
  bodyTruncated: Type.Optional(Type.Boolean()),
  responseBodyTruncated: Type.Optional(Type.Boolean()),
});
export type DlqPageEntry = Static<typeof DlqPageEntry>;

/** `GET /v2/dlq`: `messages` always, `cursor` only when another page follows. */
export const DlqPage = Type.Object({ cursor: Cursor, messages: Type.Array(DlqPageEntry) });
export type DlqPage = Static<typeof DlqPage>;

/** `GET /v2/dlq/count`. */
export const DlqCount = Type.Object({ count: Type.Integer() });
export type DlqCount = Static<typeof DlqCount>;

/** `DELETE /v2/dlq`. */
export const DlqDeleted = Type.Object({
  deleted: Type.Integer(),
  cursor: Type.Optional(Type.String({ description: "Where a filtered delete stops; absent when it went to the end" })),
});
export type DlqDeleted = Static<typeof DlqDeleted>;

/** `POST /v2/dlq/retry/{dlqId}`: the new message, `deduplicated` only when it was one. */
export const DlqRetried = Type.Object({ messageId: Type.String(), deduplicated: Type.Optional(Type.Boolean()) });
export type DlqRetried = Static<typeof DlqRetried>;

/** `POST /v2/dlq/retry`: one answer per entry; `cursor` is "" when nothing more matches (the hosted service's form). */
export const DlqRetriedMany = Type.Object({
  responses: Type.Array(DlqRetried),
  cursor: Type.Optional(Type.String()),
});
export type DlqRetriedMany = Static<typeof DlqRetriedMany>;
