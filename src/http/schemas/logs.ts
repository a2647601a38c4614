import { Cursor, HeaderMap, type Static, Type, UnixMs } from "./common.js";
import { LabelAndFlowFields } from "./messages.js";

/**
 * The options' fields of a log entry, one per descriptor of src/domain/message-options.ts
 * (`OptionLogFields`, checked equal in src/http/views/log-view.ts).
 */
export const OptionLogFieldsShape = Type.Object({
  header: Type.Optional(HeaderMap),
  method: Type.Optional(Type.String()),
  timeout: Type.Optional(Type.Number({ description: "The attempt timeout in milliseconds" })),
  maxRetries: Type.Optional(Type.Integer()),
  retryDelayExpr: Type.Optional(Type.String()),
  retryDelayExpression: Type.Optional(Type.String({ description: "The same as retryDelayExpr (both spellings are read)" })),
  callback: Type.Optional(Type.String()),
  callbackHeaders: Type.Optional(HeaderMap),
  failureCallback: Type.Optional(Type.String()),
  failureCallbackHeaders: Type.Optional(HeaderMap),
  ...LabelAndFlowFields,
});

/**
 * One log entry (docs/messaging.md "Messages and logs"): the transition, the message as published (from its CREATED
 * entry; bodies in base64) and the attempt's response. In a page, a body cut to the page's bound is flagged
 * `<field>Truncated` (src/http/views/page-budget.ts).
 */
export const LogEntry = Type.Object({
  time: UnixMs,
  messageId: Type.String(),
  state: Type.String({ description: "CREATED, ACTIVE, RETRY, ERROR, DELIVERED, FAILED, CANCEL_REQUESTED or CANCELED" }),
  url: Type.String(),
  error: Type.Optional(Type.String()),
  nextDeliveryTime: Type.Optional(UnixMs),
  topicName: Type.Optional(Type.String()),
  endpointName: Type.Optional(Type.String()),
  queueName: Type.Optional(Type.String()),
  scheduleId: Type.Optional(Type.String()),
  callerIp: Type.Optional(Type.String()),
  body: Type.Optional(Type.String({ description: "Base64" })),
  bodyTruncated: Type.Optional(Type.Boolean()),
  responseStatus: Type.Optional(Type.Integer()),
  responseHeaders: Type.Optional(HeaderMap),
  responseHeader: Type.Optional(HeaderMap),
  responseBody: Type.Optional(Type.String({ description: "Base64" })),
  responseBodyTruncated: Type.Optional(Type.Boolean()),
  dlqId: Type.Optional(Type.String()),
  ...OptionLogFieldsShape.properties,
});
export type LogEntry = Static<typeof LogEntry>;

/** `GET /v2/logs`: the entries under both names the SDKs read. */
export const LogPage = Type.Object({ cursor: Cursor, logs: Type.Array(LogEntry), events: Type.Array(LogEntry) });
export type LogPage = Static<typeof LogPage>;

/** `GET /v2/events` (the former name). */
export const EventPage = Type.Object({ cursor: Cursor, events: Type.Array(LogEntry) });
export type EventPage = Static<typeof EventPage>;
