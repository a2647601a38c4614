import { HeaderMap, type Static, Type, UnixMs } from "./common.js";

/**
 * The Schedule record (docs/schedules.md "Schedule record"): `scheduleId`, `cron`, `createdAt`, `destination`,
 * `method`, `isPaused` and `retries` always; every other key only when set (zero values are left out).
 */
export const Schedule = Type.Object({
  scheduleId: Type.String(),
  cron: Type.String({ description: "The expression as given, CRON_TZ= prefix included" }),
  createdAt: UnixMs,
  destination: Type.String({ description: "A URL or a URL group name" }),
  method: Type.String(),
  isPaused: Type.Boolean(),
  retries: Type.Integer(),
  header: Type.Optional(HeaderMap),
  body: Type.Optional(Type.String({ description: "The body when it is valid UTF-8 (redacted when asked)" })),
  bodyBase64: Type.Optional(Type.String({ description: "Any other body, base64" })),
  delay: Type.Optional(Type.Integer({ description: "Seconds" })),
  timeout: Type.Optional(Type.Integer({ description: "Seconds" })),
  callback: Type.Optional(Type.String()),
  callbackHeader: Type.Optional(HeaderMap),
  failureCallback: Type.Optional(Type.String()),
  failureCallbackHeader: Type.Optional(HeaderMap),
  callerIP: Type.Optional(Type.String({ description: "The creator's IP (the SDKs read this spelling)" })),
  callerIp: Type.Optional(Type.String({ description: "The same (the OpenAPI file's spelling)" })),
  queueName: Type.Optional(Type.String()),
  flowControlKey: Type.Optional(Type.String()),
  parallelism: Type.Optional(Type.Integer()),
  rate: Type.Optional(Type.Integer()),
  period: Type.Optional(Type.Integer({ description: "Seconds" })),
  retryDelayExpression: Type.Optional(Type.String()),
  label: Type.Optional(Type.String()),
  labels: Type.Optional(Type.Array(Type.String())),
  lastScheduleTime: Type.Optional(UnixMs),
  nextScheduleTime: Type.Optional(UnixMs),
  lastScheduleStates: Type.Optional(
    Type.Record(Type.String(), Type.Union([Type.Literal("IN_PROGRESS"), Type.Literal("SUCCESS"), Type.Literal("FAIL")]), {
      description: "Message id → IN_PROGRESS, SUCCESS or FAIL, for the messages of the last tick",
    }),
  ),
  error: Type.Optional(Type.String({ description: "Why the last tick published nothing" })),
});
export type Schedule = Static<typeof Schedule>;

/** `POST /v2/schedules/*`: the id created or updated. */
export const ScheduleCreated = Type.Object({ scheduleId: Type.String() });
export type ScheduleCreated = Static<typeof ScheduleCreated>;

/** `POST /v2/schedules/{id}/trigger` (docs/schedules.md "Run now"): the messages of one tick. */
export const ScheduleTriggered = Type.Object({
  messages: Type.Array(Type.Object({ messageId: Type.String(), url: Type.String() })),
});
export type ScheduleTriggered = Static<typeof ScheduleTriggered>;
