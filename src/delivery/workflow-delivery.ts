import type { Dialect } from "../domain/dialect.js";
import type { AttemptResponse, Message } from "../domain/message.js";
import { historyBody, invokeFollowUp, type StepDelivery, type WorkflowRun } from "../domain/workflow.js";
import type { Store } from "../store/store.js";
import type { RunEnd } from "../store/workflow-store.js";

/** What a delivery of a run's step carries instead of its stored body (docs/workflows.md "Deliveries"). */
export interface WorkflowAttempt {
  run: WorkflowRun;
  /** The history up to and including this message's entry, as JSON (contract §4.4); it is what gets signed. */
  body: Buffer;
  /** The run headers (contract §2.2), added to the message's own. */
  headers: Record<string, string>;
}

/**
 * Prepares the attempt of a step or timeout message: `drop` when its run is no longer started (cancelled, finished,
 * failed) or its wait was already notified, so nothing reaches the endpoint after a cancel; undefined for messages
 * delivered as they are (not a run's, or a `context.call` request to a third party).
 */
export async function prepareWorkflowAttempt(
  store: Store,
  m: Message,
  dialect: Dialect,
  now: number,
): Promise<WorkflowAttempt | "drop" | undefined> {
  const link = m.spec.workflow;
  if (!link || link.role === "call") return undefined;
  const prepared = await store.workflowDeliveryPrepare({
    accountId: m.accountId,
    runId: link.runId,
    messageId: m.id,
    ...(link.waiterId !== undefined ? { waiterId: link.waiterId, body: m.body ?? Buffer.alloc(0) } : {}),
    now,
  });
  if (!prepared.deliver) return "drop";
  return workflowAttempt(prepared, m, dialect);
}

/**
 * The attempt of a step from its run and history (read at delivery, or in the transaction that appended the step
 * when this node inserted it leased to itself): the history as the body, and the run headers.
 */
export function workflowAttempt({ run, history }: StepDelivery, m: Message, dialect: Dialect): WorkflowAttempt {
  const headers: Record<string, string> = {
    [dialect.header("Workflow-RunId")]: run.runId,
    [dialect.header("Workflow-CreatedAt")]: String(run.createdAt),
    [dialect.header("Workflow-Url")]: run.url,
  };
  if (run.label !== undefined) headers[dialect.header("Label")] = run.label;
  // A run created by POST /v2/trigger asks the SDK to start it itself (contract §6.11).
  if (run.restTrigger && m.id === run.initMessageId) headers[dialect.header("Workflow-Unknown-Sdk")] = "true";
  return { run, body: historyBody(history), headers };
}

/** The end of the run whose step failed for good (contract §6.7), with its invoker's result step (§6.5). */
export function failedRunEnd(run: WorkflowRun, dlqId: string, now: number, failureMessageId?: string): RunEnd {
  const end: RunEnd = { accountId: run.accountId, runId: run.runId, state: "RUN_FAILED", dlqId, now };
  if (failureMessageId !== undefined) end.failureMessageId = failureMessageId;
  const followUp = invokeFollowUp(run, "RUN_FAILED", undefined, now);
  if (followUp) end.followUp = followUp;
  return end;
}


/** The error of a REST trigger whose endpoint is no workflow SDK (contract §6.11, the SDK's CI). */
export const NOT_AN_SDK_ERROR = "trigger rest api is only usable with sdk versions after v1.0.0 major version";

/**
 * The first delivery of a run created by `POST /v2/trigger` reached an endpoint: a workflow SDK answers with its
 * `…-Workflow-Sdk` header (the SDK's WF_DetectTrigger). A 2xx without it is no SDK, and the run fails at once with
 * the SDK's own error text (contract §6.11) instead of staying started forever: the answer becomes a non-retryable
 * failure, so the step goes to the DLQ and the run to RUN_FAILED.
 */
export function restTriggerAnswer(
  attempt: WorkflowAttempt,
  m: Message,
  response: AttemptResponse,
  dialect: Dialect,
): AttemptResponse {
  const { run } = attempt;
  if (!run.restTrigger || m.id !== run.initMessageId) return response;
  if (response.status === undefined || response.status < 200 || response.status >= 300) return response;
  const sdkHeader = dialect.key("Workflow-Sdk");
  if (Object.keys(response.headers).some((name) => name.toLowerCase() === sdkHeader)) return response;
  const { status: _status, ...rest } = response;
  return { ...rest, error: NOT_AN_SDK_ERROR, nonRetryable: true };
}
