import { type Static, Type, UnixMs } from "./common.js";

/** What an action would do; when not allowed, why (the words the POST refuses with). */
const Refused = Type.Object({ allowed: Type.Literal(false), reason: Type.String() });

/** Retry's plan: retry the DLQ entry (a failed message), or make the next attempt due now (one waiting to retry). */
export const RetryPlan = Type.Union([
  Type.Object({ allowed: Type.Literal(true), kind: Type.Literal("dlq"), dlqId: Type.String() }),
  Type.Object({ allowed: Type.Literal(true), kind: Type.Literal("deliverNow"), dueAt: UnixMs }),
  Refused,
]);
export type RetryPlan = Static<typeof RetryPlan>;

/** Replay's plan. */
export const ReplayPlan = Type.Union([Type.Object({ allowed: Type.Literal(true) }), Refused]);
export type ReplayPlan = Static<typeof ReplayPlan>;

/** Either plan, as the console reads them. */
export type ActionPlan = RetryPlan | ReplayPlan;

/** `GET /v2/messages/{id}/actions` (docs/messaging.md "Retry and replay"). */
export const MessageActions = Type.Object({
  messageId: Type.String(),
  state: Type.Optional(Type.String({ description: "The row's state while it is kept (absent once it left)" })),
  retry: RetryPlan,
  replay: ReplayPlan,
  replayOf: Type.Optional(Type.String({ description: "The message this one replays" })),
  replays: Type.Array(Type.Object({ messageId: Type.String(), createdAt: UnixMs })),
});
export type MessageActions = Static<typeof MessageActions>;

/** `POST /v2/messages/{id}/retry` answering 200: its next attempt is due now. */
export const RetriedNow = Type.Object({ messageId: Type.String(), action: Type.Literal("deliverNow") });
export type RetriedNow = Static<typeof RetriedNow>;

/** `POST /v2/messages/{id}/retry` answering 201: its DLQ entry was retried as a new message. */
export const RetriedFromDlq = Type.Object({
  messageId: Type.String({ description: "The new message" }),
  action: Type.Literal("dlqRetry"),
  dlqId: Type.String(),
  deduplicated: Type.Optional(Type.Boolean()),
});
export type RetriedFromDlq = Static<typeof RetriedFromDlq>;

/** `POST /v2/messages/{id}/replay` (201). */
export const Replayed = Type.Object({
  messageId: Type.String({ description: "The new message" }),
  replayOf: Type.String(),
});
export type Replayed = Static<typeof Replayed>;
