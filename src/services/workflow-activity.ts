import type { LogRecord } from "../store/store.js";
import type { HistoryEntry, WorkflowRun } from "../domain/workflow.js";
import type { Services } from "./context.js";

/*
 * What a run is doing besides its finished steps (docs/workflows.md "Run logs"; contract §6.9, §6.10): its pending or
 * failed step messages (the logs' trailing `next` group) and its failure callback (the logs' `failureFunction`, the
 * DLQ's `failureCallbackInfo`). Both are read from the messages' log entries, so they need no state of their own.
 */

/** Log entries read per run: a 50-step run has about 200; a longer one shows only its latest messages' entries. */
const MAX_ENTRIES = 1000;

export type NextState = "STEP_PROGRESS" | "STEP_RETRY" | "STEP_FAILED" | "STEP_CANCELED";
export type CallbackState = "CALLBACK_INPROGRESS" | "CALLBACK_SUCCESS" | "CALLBACK_FAIL" | "CALLBACK_CANCELED";

export interface StepError {
  error: string;
  body: string;
  headers: Record<string, string[]>;
  status: number;
  time: number;
}

export interface NextStep {
  messageId: string;
  /** The step the SDK was running when it failed: its `…-Error-Step-Name` answer header. */
  stepName?: string;
  state: NextState;
  retries: number;
  retryDelay?: string;
  errors: StepError[];
}

export interface FailureCallbackInfo {
  state: CallbackState;
  responseStatus?: number;
  responseBody?: string;
  responseHeaders?: Record<string, string[]>;
}

/** The logs' `failureFunction` block of a failed run that sent a failure callback (docs/workflows.md "Run logs"). */
export interface FailureFunction {
  messageId: string;
  url: string;
  state: CallbackState;
  failStatus: number;
  failResponse: string;
  failHeaders: Record<string, string[]>;
  dlqId: string;
  errors: StepError[];
  responseStatus: number;
  responseBody: string;
  responseHeaders: Record<string, string[]>;
}

export interface RunActivity {
  next: NextStep[];
  failureFunction?: FailureFunction;
}

/** Each message's entries, oldest first. */
async function entriesOf(services: Services, run: WorkflowRun, ids: string[]): Promise<Map<string, LogRecord[]>> {
  const byId = new Map<string, LogRecord[]>();
  if (ids.length === 0) return byId;
  const { logs } = await services.store.logList({
    accountId: run.accountId,
    filter: { messageIds: ids },
    count: MAX_ENTRIES,
    order: "latestFirst",
  });
  for (const log of logs.reverse()) {
    const list = byId.get(log.messageId) ?? [];
    list.push(log);
    byId.set(log.messageId, list);
  }
  return byId;
}

const utf8 = (base64: string | undefined) => (base64 === undefined ? "" : Buffer.from(base64, "base64").toString("utf8"));

const errorsOf = (entries: LogRecord[]): StepError[] =>
  entries
    .filter((e) => e.state === "ERROR")
    .map((e) => ({
      error: e.details.error ?? "",
      body: utf8(e.details.responseBody),
      headers: e.details.responseHeaders ?? {},
      status: e.details.responseStatus ?? 0,
      time: e.time,
    }));

/** The SDK names the failing step in its answer (`Upstash-Error-Step-Name`), in any dialect's prefix. */
function failedStepName(entries: LogRecord[]): string | undefined {
  for (const e of [...entries].reverse()) {
    for (const [name, values] of Object.entries(e.details.responseHeaders ?? {})) {
      if (name.toLowerCase().endsWith("-error-step-name") && values[0] !== undefined) return values[0];
    }
  }
  return undefined;
}

/**
 * A step message that is not delivered: failed (its last entry FAILED), cancelled (CANCELED, or any pending message of
 * a run that was cancelled or failed: it is dropped when it comes due), retrying (its last attempt failed) or in
 * progress. A finished run's messages still in flight (its last call answering) are not shown.
 */
function nextStateOf(run: WorkflowRun, entries: LogRecord[]): NextState | undefined {
  if (entries.some((e) => e.state === "DELIVERED")) return undefined;
  const last = entries[entries.length - 1]?.state;
  if (last === "FAILED") return "STEP_FAILED";
  if (last === "CANCELED" || last === "CANCEL_REQUESTED") return "STEP_CANCELED";
  if (run.state === "RUN_SUCCESS") return undefined;
  if (run.state !== "RUN_STARTED") return "STEP_CANCELED";
  return last === "ERROR" || last === "RETRY" ? "STEP_RETRY" : "STEP_PROGRESS";
}

function callbackInfoOf(entries: LogRecord[]): FailureCallbackInfo {
  const last = entries[entries.length - 1];
  const state: CallbackState = entries.some((e) => e.state === "DELIVERED")
    ? "CALLBACK_SUCCESS"
    : last?.state === "FAILED"
      ? "CALLBACK_FAIL"
      : last?.state === "CANCELED"
        ? "CALLBACK_CANCELED"
        : "CALLBACK_INPROGRESS";
  const answered = [...entries].reverse().find((e) => e.details.responseStatus !== undefined);
  const info: FailureCallbackInfo = { state };
  if (answered) {
    info.responseStatus = answered.details.responseStatus!;
    info.responseBody = utf8(answered.details.responseBody);
    info.responseHeaders = answered.details.responseHeaders ?? {};
  }
  return info;
}

/** The endpoint's error answer as the failure function sees it: the SDK's `{message}` when it sent one. */
function failResponseOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as { message?: unknown }).message === "string") {
      return (parsed as { message: string }).message;
    }
  } catch {
    // not JSON: the raw answer
  }
  return body;
}

/** The run's `next` group and `failureFunction` block (contract §6.9). */
export async function runActivity(services: Services, run: WorkflowRun, history: HistoryEntry[]): Promise<RunActivity> {
  const stepIds = [...new Set(history.map((e) => e.messageId))];
  const ids = run.failureMessageId !== undefined ? [...stepIds, run.failureMessageId] : stepIds;
  const byId = await entriesOf(services, run, ids);
  const next: NextStep[] = [];
  let failed: LogRecord | undefined;
  for (const id of stepIds) {
    const entries = byId.get(id) ?? [];
    const state = nextStateOf(run, entries);
    failed ??= entries.find((e) => e.state === "FAILED" && e.details.dlqId === run.dlqId);
    if (state === undefined) continue;
    const created = entries.find((e) => e.state === "CREATED")?.details;
    const step: NextStep = { messageId: id, state, retries: created?.maxRetries ?? run.config.retries, errors: errorsOf(entries) };
    const stepName = failedStepName(entries);
    if (stepName !== undefined) step.stepName = stepName;
    const retryDelay = created?.retryDelayExpr ?? run.config.retryDelayExpr;
    if (retryDelay !== undefined) step.retryDelay = retryDelay;
    next.push(step);
  }
  const activity: RunActivity = { next };
  if (run.failureMessageId !== undefined) {
    const info = callbackInfoOf(byId.get(run.failureMessageId) ?? []);
    const failBody = utf8(failed?.details.responseBody);
    activity.failureFunction = {
      messageId: run.failureMessageId,
      url: run.config.failureCallback?.url ?? run.url,
      state: info.state,
      failStatus: failed?.details.responseStatus ?? 0,
      failResponse: failResponseOf(failBody),
      failHeaders: failed?.details.responseHeaders ?? {},
      dlqId: run.dlqId ?? "",
      errors: errorsOf(byId.get(run.failureMessageId) ?? []),
      responseStatus: info.responseStatus ?? 0,
      responseBody: info.responseBody ?? "",
      responseHeaders: info.responseHeaders ?? {},
    };
  }
  return activity;
}

/** The DLQ's `failureCallbackInfo` of a failed run (contract §6.10); undefined when it sent no failure callback. */
export async function failureCallbackInfo(services: Services, run: WorkflowRun): Promise<FailureCallbackInfo | undefined> {
  if (run.failureMessageId === undefined) return undefined;
  const byId = await entriesOf(services, run, [run.failureMessageId]);
  return callbackInfoOf(byId.get(run.failureMessageId) ?? []);
}
