import { HeaderMap, type Static, Type, UnixMs } from "./common.js";

/*
 * The workflow endpoints' answers (docs/workflows.md; the contract the official @upstash/workflow SDK reads is
 * ../shared/docs/workflow-api.md, whose section numbers are cited below).
 */

/** `{}`: finishing or cancelling a run (E4, E5) and registering a wait (E8); the SDK reads only the status. */
export const WorkflowAck = Type.Object({});
export type WorkflowAck = Static<typeof WorkflowAck>;

/** E7: one entry of a run's history, as the SDK's lazy fetch reads it (§4.4). */
export const HistoryEntry = Type.Object({
  messageId: Type.String(),
  body: Type.String({ description: "The entry's bytes, base64" }),
  callType: Type.String(),
});
export type HistoryEntry = Static<typeof HistoryEntry>;

/** E10: a live waiter of an event (the SDK's `Waiter`); `timeoutBody` only when the wait sent one. */
export const Waiter = Type.Object({
  url: Type.String(),
  deadline: Type.Integer({ description: "Unix seconds" }),
  headers: HeaderMap,
  timeoutUrl: Type.String(),
  timeoutHeaders: HeaderMap,
  timeoutBody: Type.Optional(Type.String()),
});
export type Waiter = Static<typeof Waiter>;

/** E9: one waiter an event was delivered to, with the message that delivers it. */
export const Notified = Type.Object({ waiter: Waiter, messageId: Type.String() });
export type Notified = Static<typeof Notified>;

/** E6: how many started runs were cancelled. */
export const RunsCancelled = Type.Object({ cancelled: Type.Integer() });
export type RunsCancelled = Static<typeof RunsCancelled>;

/** A run a call started: E13 (in `workflowRuns`), E14, E17. */
export const RunRef = Type.Object({ workflowRunId: Type.String(), workflowCreatedAt: UnixMs });
export type RunRef = Static<typeof RunRef>;

/** E13: the runs DLQ resume or restart started; `cursor` when more entries match. */
export const RunRefs = Type.Object({ workflowRuns: Type.Array(RunRef), cursor: Type.Optional(Type.String()) });
export type RunRefs = Static<typeof RunRefs>;

/** E15 (and the delete of one entry): how many workflow DLQ entries were deleted; `cursor` when more match. */
export const WorkflowDlqDeleted = Type.Object({ deleted: Type.Integer(), cursor: Type.Optional(Type.String()) });
export type WorkflowDlqDeleted = Static<typeof WorkflowDlqDeleted>;

/** E16: how many waits of the run the webhook call resolved (0: kept for a later wait, docs/workflows.md). */
export const HookReceived = Type.Object({ notified: Type.Integer() });
export type HookReceived = Static<typeof HookReceived>;

/** A failed attempt of a step message or of the failure callback (the SDK's `StepError`). */
export const StepError = Type.Object({
  error: Type.String(),
  body: Type.String(),
  headers: HeaderMap,
  status: Type.Integer(),
  time: UnixMs,
});
export type StepError = Static<typeof StepError>;

/**
 * One step of a run's logs (§6.9, the SDK's `StepLog` and the `next` group's entries). A finished step carries the
 * fields of the SDK's step JSON (§5) that the SDK's types name, those the server adds (`callType`, `messageId`,
 * `state`, `createdAt`), and nothing else; a `next` entry carries `messageId`, `stepName?`, `state`, `retries`,
 * `retryDelay?` and `errors`. So every field is optional here. Values the SDK sends as the caller's own JSON
 * (`callBody`, call and invoke headers and bodies) are written as they are.
 */
export const WorkflowStep = Type.Object({
  stepId: Type.Optional(Type.Integer()),
  stepName: Type.Optional(Type.String()),
  stepType: Type.Optional(Type.String({ description: "Initial, Run, SleepFor, SleepUntil, Call, Wait, Invoke, …" })),
  callType: Type.Optional(Type.String()),
  messageId: Type.Optional(Type.String()),
  out: Type.Optional(
    Type.String({ description: "The step's result as JSON text (base64 of the event data for wait steps)" }),
  ),
  concurrent: Type.Optional(Type.Integer()),
  targetStep: Type.Optional(Type.Integer()),
  state: Type.Optional(
    Type.String({ description: "STEP_SUCCESS, STEP_PROGRESS, STEP_RETRY, STEP_FAILED or STEP_CANCELED" }),
  ),
  createdAt: Type.Optional(UnixMs),
  sleepFor: Type.Optional(Type.Union([Type.Number(), Type.String()], { description: "Seconds or a duration text" })),
  sleepUntil: Type.Optional(Type.Number({ description: "Unix seconds" })),
  callUrl: Type.Optional(Type.String()),
  callMethod: Type.Optional(Type.String()),
  callBody: Type.Optional(Type.Unknown()),
  callHeaders: Type.Optional(Type.Unknown()),
  callResponseStatus: Type.Optional(Type.Integer()),
  callResponseBody: Type.Optional(Type.Unknown()),
  callResponseHeaders: Type.Optional(Type.Unknown()),
  waitEventId: Type.Optional(Type.String()),
  timeout: Type.Optional(Type.String()),
  waitTimeout: Type.Optional(Type.Boolean()),
  waitTimeoutDuration: Type.Optional(Type.String()),
  waitTimeoutDeadline: Type.Optional(Type.Number()),
  invokedWorkflowRunId: Type.Optional(Type.String()),
  invokedWorkflowUrl: Type.Optional(Type.String()),
  invokedWorkflowCreatedAt: Type.Optional(Type.Number()),
  invokedWorkflowRunBody: Type.Optional(Type.Unknown()),
  invokedWorkflowRunHeaders: Type.Optional(Type.Unknown()),
  notifyEventId: Type.Optional(Type.String()),
  eventData: Type.Optional(Type.String()),
  retries: Type.Optional(Type.Integer()),
  retryDelay: Type.Optional(Type.String()),
  errors: Type.Optional(Type.Array(StepError)),
});
export type WorkflowStep = Static<typeof WorkflowStep>;

/** Steps of one group: a sequential step, the results of one parallel group, or the run's pending or failed work. */
export const WorkflowStepGroup = Type.Object({
  type: Type.Union([Type.Literal("sequential"), Type.Literal("parallel"), Type.Literal("next")]),
  steps: Type.Array(WorkflowStep),
});
export type WorkflowStepGroup = Static<typeof WorkflowStepGroup>;

/** A failed run's failure callback (the SDK's `FailureFunctionLog`, docs/workflows.md "Run logs"). */
export const FailureFunctionLog = Type.Object({
  messageId: Type.String(),
  url: Type.String(),
  state: Type.Union([
    Type.Literal("CALLBACK_INPROGRESS"),
    Type.Literal("CALLBACK_SUCCESS"),
    Type.Literal("CALLBACK_FAIL"),
    Type.Literal("CALLBACK_CANCELED"),
  ]),
  failStatus: Type.Integer(),
  failResponse: Type.String(),
  failHeaders: HeaderMap,
  dlqId: Type.String(),
  errors: Type.Array(StepError),
  responseStatus: Type.Integer(),
  responseBody: Type.String(),
  responseHeaders: HeaderMap,
});
export type FailureFunctionLog = Static<typeof FailureFunctionLog>;

/** E11: one run with its steps (§6.9, the SDK's `WorkflowRunLog`). */
export const WorkflowRun = Type.Object({
  workflowRunId: Type.String(),
  workflowUrl: Type.String(),
  workflowState: Type.Union([
    Type.Literal("RUN_STARTED"),
    Type.Literal("RUN_SUCCESS"),
    Type.Literal("RUN_FAILED"),
    Type.Literal("RUN_CANCELED"),
  ]),
  workflowRunCreatedAt: UnixMs,
  steps: Type.Array(WorkflowStepGroup),
  workflowRunCompletedAt: Type.Optional(UnixMs),
  workflowRunResponse: Type.Optional(Type.String({ description: "The raw body of the run's last call (E4)" })),
  label: Type.Optional(Type.String()),
  dlqId: Type.Optional(Type.String()),
  failureFunction: Type.Optional(FailureFunctionLog),
  invoker: Type.Optional(
    Type.Object({ workflowRunId: Type.String(), workflowUrl: Type.String(), workflowRunCreatedAt: UnixMs }),
  ),
});
export type WorkflowRun = Static<typeof WorkflowRun>;

/** E11: a page of runs, newest first; `cursor` when more follow. */
export const WorkflowRunPage = Type.Object({ runs: Type.Array(WorkflowRun), cursor: Type.Optional(Type.String()) });
export type WorkflowRunPage = Static<typeof WorkflowRunPage>;
