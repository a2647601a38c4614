import type { HistoryEntry, Waiter, WorkflowRun } from "../../domain/workflow.js";
import type { RunActivity } from "../../services/workflow-activity.js";

/** E7: the run's history as the SDK's lazy fetch reads it (contract §4.4). */
export const historyView = (entries: HistoryEntry[]) =>
  entries.map((e) => ({ messageId: e.messageId, body: e.body.toString("base64"), callType: e.callType }));

/** E10: one waiter (contract §3, `Waiter`). */
export const waiterView = (w: Waiter) => {
  const view: Record<string, unknown> = {
    url: w.url,
    deadline: Math.floor(w.deadline / 1000),
    headers: w.headers,
    timeoutUrl: w.timeoutUrl,
    timeoutHeaders: w.timeoutHeaders,
  };
  if (w.timeoutBody !== undefined) view.timeoutBody = w.timeoutBody;
  return view;
};

/** A step entry's JSON, or undefined for the payload (entry 0) and anything that is not a step. */
function stepOf(e: HistoryEntry): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(e.body.toString("utf8")) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * E11: one run as the SDK's `logs()` reads it (contract §6.9): the payload as the first sequential group, then the
 * results in history order; results of one parallel group (`concurrent` > 1) are grouped, plan steps left out; then
 * the pending or failed step messages as a trailing `next` group, and the failure callback as `failureFunction`.
 */
export function runLogView(run: WorkflowRun, history: HistoryEntry[], activity: RunActivity = { next: [] }) {
  const groups: { type: "sequential" | "parallel" | "next"; steps: Record<string, unknown>[] }[] = [];
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
    const view = { ...step, callType: e.callType, messageId: e.messageId, state: "STEP_SUCCESS", createdAt: e.createdAt };
    const concurrent = typeof step.concurrent === "number" ? step.concurrent : 1;
    const last = groups[groups.length - 1]!;
    if (concurrent > 1) {
      if (last.type === "parallel" && last.steps.length < concurrent) last.steps.push(view);
      else groups.push({ type: "parallel", steps: [view] });
    } else groups.push({ type: "sequential", steps: [view] });
  }
  if (activity.next.length > 0) groups.push({ type: "next", steps: activity.next.map((step) => ({ ...step })) });
  const view: Record<string, unknown> = {
    workflowRunId: run.runId,
    workflowUrl: run.url,
    workflowState: run.state,
    workflowRunCreatedAt: run.createdAt,
    steps: groups,
  };
  if (run.completedAt !== undefined) view.workflowRunCompletedAt = run.completedAt;
  if (run.result !== undefined) view.workflowRunResponse = run.result;
  if (run.label !== undefined) view.label = run.label;
  if (run.dlqId !== undefined) view.dlqId = run.dlqId;
  if (activity.failureFunction) view.failureFunction = activity.failureFunction;
  if (run.invoker) {
    view.invoker = {
      workflowRunId: run.invoker.workflowRunId,
      workflowUrl: run.invoker.workflowUrl,
      workflowRunCreatedAt: run.invoker.workflowRunCreatedAt,
    };
  }
  return view;
}
