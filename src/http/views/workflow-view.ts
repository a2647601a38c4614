import type { HistoryEntry as HistoryRow, Waiter as WaiterRow, WorkflowRun as RunRow } from "../../domain/workflow.js";
import type { NextStep, RunActivity } from "../../services/workflow-activity.js";
import type {
  HistoryEntry,
  Waiter,
  WorkflowRun,
  WorkflowStep,
  WorkflowStepGroup,
} from "../schemas/workflows.js";

/** E7: the run's history as the SDK's lazy fetch reads it (contract §4.4). */
export const historyView = (entries: HistoryRow[]): HistoryEntry[] =>
  entries.map((e) => ({ messageId: e.messageId, body: e.body.toString("base64"), callType: e.callType }));

/** E10: one waiter (contract §3, `Waiter`). */
export function waiterView(w: WaiterRow): Waiter {
  return {
    url: w.url,
    deadline: Math.floor(w.deadline / 1000),
    headers: w.headers,
    timeoutUrl: w.timeoutUrl,
    timeoutHeaders: w.timeoutHeaders,
    ...(w.timeoutBody !== undefined ? { timeoutBody: w.timeoutBody } : {}),
  };
}

/** A step entry's JSON, or undefined for the payload (entry 0) and anything that is not a step. */
function stepOf(e: HistoryRow): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(e.body.toString("utf8")) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

// The step JSON is the SDK's (contract §5): each field is taken only when it has the type the SDK's types give it.
const str = (v: unknown) => (typeof v === "string" ? v : undefined);
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const int = (v: unknown) => (Number.isInteger(v) ? (v as number) : undefined);
const bool = (v: unknown) => (typeof v === "boolean" ? v : undefined);
/** `out` is JSON text (§5); anything else a step carries there is written as its JSON text. */
const text = (v: unknown) => (v === undefined || typeof v === "string" ? v : JSON.stringify(v));

/**
 * A finished step of the logs: the fields of the SDK's step JSON that its types name (`Step`, `StepLog`), then the
 * server's own. Fields the SDK did not send are left undefined, which the wire shape omits.
 */
function finishedStep(step: Record<string, unknown>, e: HistoryRow): WorkflowStep {
  return {
    stepId: int(step.stepId),
    stepName: str(step.stepName),
    stepType: str(step.stepType),
    callType: e.callType,
    messageId: e.messageId,
    out: text(step.out),
    concurrent: int(step.concurrent),
    targetStep: int(step.targetStep),
    state: "STEP_SUCCESS",
    createdAt: e.createdAt,
    sleepFor: num(step.sleepFor) ?? str(step.sleepFor),
    sleepUntil: num(step.sleepUntil),
    callUrl: str(step.callUrl),
    callMethod: str(step.callMethod),
    callBody: step.callBody,
    callHeaders: step.callHeaders,
    callResponseStatus: int(step.callResponseStatus),
    callResponseBody: step.callResponseBody,
    callResponseHeaders: step.callResponseHeaders,
    waitEventId: str(step.waitEventId),
    timeout: str(step.timeout),
    waitTimeout: bool(step.waitTimeout),
    waitTimeoutDuration: str(step.waitTimeoutDuration),
    waitTimeoutDeadline: num(step.waitTimeoutDeadline),
    invokedWorkflowRunId: str(step.invokedWorkflowRunId),
    invokedWorkflowUrl: str(step.invokedWorkflowUrl),
    invokedWorkflowCreatedAt: num(step.invokedWorkflowCreatedAt),
    invokedWorkflowRunBody: step.invokedWorkflowRunBody,
    invokedWorkflowRunHeaders: step.invokedWorkflowRunHeaders,
    notifyEventId: str(step.notifyEventId),
    eventData: str(step.eventData),
  };
}

/** An entry of the `next` group: a step message not delivered (src/services/workflow-activity.ts). */
const nextStep = (s: NextStep): WorkflowStep => ({
  messageId: s.messageId,
  stepName: s.stepName,
  state: s.state,
  retries: s.retries,
  retryDelay: s.retryDelay,
  errors: s.errors,
});

/**
 * E11: one run as the SDK's `logs()` reads it (contract §6.9): the payload as the first sequential group, then the
 * results in history order; results of one parallel group (`concurrent` > 1) are grouped, plan steps left out; then
 * the pending or failed step messages as a trailing `next` group, and the failure callback as `failureFunction`.
 */
export function runLogView(run: RunRow, history: HistoryRow[], activity: RunActivity = { next: [] }): WorkflowRun {
  const groups: WorkflowStepGroup[] = [];
  const [first, ...rest] = history;
  if (first) {
    groups.push({
      type: "sequential",
      steps: [
        {
          stepId: 0,
          stepName: "init",
          stepType: "Initial",
          callType: "step",
          messageId: first.messageId,
          out: first.body.toString("utf8"),
          concurrent: 1,
          state: "STEP_SUCCESS",
          createdAt: first.createdAt,
        },
      ],
    });
  }
  for (const e of rest) {
    const step = stepOf(e);
    if (!step || step.stepId === 0 || typeof step.stepId !== "number") continue;
    const view = finishedStep(step, e);
    const concurrent = view.concurrent ?? 1;
    const last = groups[groups.length - 1]!;
    if (concurrent > 1) {
      if (last.type === "parallel" && last.steps.length < concurrent) last.steps.push(view);
      else groups.push({ type: "parallel", steps: [view] });
    } else groups.push({ type: "sequential", steps: [view] });
  }
  if (activity.next.length > 0) groups.push({ type: "next", steps: activity.next.map(nextStep) });
  return {
    workflowRunId: run.runId,
    workflowUrl: run.url,
    workflowState: run.state,
    workflowRunCreatedAt: run.createdAt,
    steps: groups,
    workflowRunCompletedAt: run.completedAt,
    workflowRunResponse: run.result,
    label: run.label,
    dlqId: run.dlqId,
    failureFunction: activity.failureFunction,
    invoker: run.invoker && {
      workflowRunId: run.invoker.workflowRunId,
      workflowUrl: run.invoker.workflowUrl,
      workflowRunCreatedAt: run.invoker.workflowRunCreatedAt,
    },
  };
}
