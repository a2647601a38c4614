import { MESSAGE_LIST_STATES } from "../../domain/message-list-state.js";
import { Cursor, type Static, Type, UnixMs } from "./common.js";

/**
 * One entry of `GET /v2/messages` (docs/messaging.md "Listing messages"): a message's current state and what an
 * operator scans a list for, never its body.
 */
export const MessageListEntry = Type.Object(
  {
    messageId: Type.String(),
    state: Type.Enum(MESSAGE_LIST_STATES, { description: `One of ${MESSAGE_LIST_STATES.join(", ")}` }),
    waitReason: Type.Optional(
      Type.Union([Type.Literal("flowControlKey"), Type.Literal("globalParallelism")], {
        description: "FLOW_CONTROL only: what holds it",
      }),
    ),
    url: Type.String(),
    topicName: Type.Optional(Type.String()),
    endpointName: Type.Optional(Type.String()),
    queueName: Type.Optional(Type.String()),
    scheduleId: Type.Optional(Type.String()),
    flowControlKey: Type.Optional(Type.String()),
    labels: Type.Optional(Type.Array(Type.String())),
    attempts: Type.Integer(),
    lastResponseStatus: Type.Optional(Type.Integer()),
    nextDeliveryTime: Type.Optional(
      Type.Integer({ description: "CREATED, DELAYED and RETRY: when the next attempt is due (Unix ms)" }),
    ),
    cancelRequested: Type.Optional(Type.Boolean({ description: "Only while it lives, when a cancel waits for its attempt" })),
    createdAt: UnixMs,
    firstAttemptAt: Type.Optional(UnixMs),
    finishedAt: Type.Optional(UnixMs),
    kind: Type.Optional(
      Type.Union([Type.Literal("callback"), Type.Literal("failureCallback")], {
        description: "Absent for a message",
      }),
    ),
    parentMessageId: Type.Optional(Type.String()),
    callerIP: Type.Optional(Type.String()),
    bodySize: Type.Integer({ description: "The body's size in bytes: the list never carries bodies" }),
  },
  { description: 'One message with its current state (docs/messaging.md "Listing messages")' },
);
export type MessageListEntry = Static<typeof MessageListEntry>;

/** A page of `GET /v2/messages`. */
export const MessageListPage = Type.Object({ messages: Type.Array(MessageListEntry), cursor: Cursor });
export type MessageListPage = Static<typeof MessageListPage>;
