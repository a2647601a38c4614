import { HeaderMap, type Static, Type, UnixMs } from "./common.js";

/** The labels and flow-control options, named alike in records and log entries (src/domain/message-options.ts). */
export const LabelAndFlowFields = {
  label: Type.Optional(Type.String({ description: "The first of `labels`" })),
  labels: Type.Optional(Type.Array(Type.String())),
  flowControlKey: Type.Optional(Type.String()),
  parallelism: Type.Optional(Type.Number()),
  rate: Type.Optional(Type.Number()),
  period: Type.Optional(Type.Number({ description: "Flow-control rate period in seconds" })),
};

/**
 * The options' fields of a message, DLQ or schedule record, one per descriptor of src/domain/message-options.ts
 * (`OptionRecordFields`, checked equal in src/http/views/message-view.ts): the schedule record renames `maxRetries` to `retries`.
 */
export const OptionRecordFieldsShape = Type.Object({
  method: Type.String(),
  maxRetries: Type.Integer(),
  header: Type.Optional(HeaderMap),
  retryDelayExpression: Type.Optional(Type.String()),
  timeout: Type.Optional(Type.Number({ description: "The attempt timeout in seconds" })),
  callback: Type.Optional(Type.String()),
  callbackHeader: Type.Optional(HeaderMap),
  failureCallback: Type.Optional(Type.String()),
  failureCallbackHeader: Type.Optional(HeaderMap),
  ...LabelAndFlowFields,
});

/** A body: text when it is valid UTF-8, else base64 (docs/messaging.md "Messages and logs"). */
export const BodyFields = {
  body: Type.Optional(Type.String()),
  bodyBase64: Type.Optional(Type.String()),
};

/** The message record: `GET /v2/messages/{id}`, and the base of a DLQ record (docs/messaging.md "Messages and logs"). */
export const MessageRecord = Type.Object({
  messageId: Type.String(),
  url: Type.String(),
  notBefore: UnixMs,
  createdAt: UnixMs,
  ...BodyFields,
  topicName: Type.Optional(Type.String()),
  endpointName: Type.Optional(Type.String()),
  queueName: Type.Optional(Type.String()),
  scheduleId: Type.Optional(Type.String()),
  callerIP: Type.Optional(Type.String()),
  ...OptionRecordFieldsShape.properties,
});
export type MessageRecord = Static<typeof MessageRecord>;

/** `DELETE /v2/messages/{id}` and `DELETE /v2/messages`. */
export const Cancelled = Type.Object({ cancelled: Type.Integer({ description: "How many messages were cancelled" }) });
export type Cancelled = Static<typeof Cancelled>;
