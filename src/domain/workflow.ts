import { invalidField } from "../errors.js";
import type { DialectName } from "./dialect.js";
import type { HeaderMap } from "./headers.js";
import { newMessageId } from "./ids.js";
import type { CallbackConfig, FlowControl, MessageSpec, NewMessage } from "./message.js";
import type { RedactSpec } from "./redact.js";

/*
 * Workflow runs (docs/workflows.md; the server contract is ../shared/docs/workflow-api.md, derived from the official
 * `@upstash/workflow` SDK). A run is a sequence of messages to one workflow URL; each delivery carries the run's step
 * history up to and including its own entry. Pure rules and records only: the store applies them.
 */

export type RunState = "RUN_STARTED" | "RUN_SUCCESS" | "RUN_FAILED" | "RUN_CANCELED";
export const RUN_STATES: readonly RunState[] = ["RUN_STARTED", "RUN_SUCCESS", "RUN_FAILED", "RUN_CANCELED"];

/** The trigger's settings, applied to every later message of the run (contract §4.2, WF_TriggerOnConfig). */
export interface RunConfig {
  /** Forwarded headers (canonical names), Content-Type included. */
  headers: HeaderMap;
  retries: number;
  retryDelayExpr?: string;
  flowControl?: FlowControl;
  failureCallback?: CallbackConfig;
  labels?: string[];
  redact?: RedactSpec;
  /** The names its trigger used: every later message of the run is delivered and signed in them. */
  dialect?: DialectName;
}

/** The run that invoked this one (contract §6.5): the child's end is appended to it as the Invoke step's result. */
export interface RunInvoker {
  workflowRunId: string;
  workflowUrl: string;
  workflowRunCreatedAt: number;
  /** The parent's Invoke step JSON, completed with `out` when the child ends. */
  step: Record<string, unknown>;
  /** The parent's step publish headers (name → values), used to publish the result step. */
  headers: Record<string, string[]>;
  /** Those headers read as a step publish of the parent, with the parent's settings applied. */
  spec: MessageSpec;
}

export interface WorkflowRun {
  accountId: string;
  runId: string;
  url: string;
  state: RunState;
  createdAt: number;
  updatedAt: number;
  completedAt?: number;
  label?: string;
  config: RunConfig;
  /** The trigger's payload: history entry 0, and the failure callback's `sourceBody`. */
  initialBody: Buffer;
  /** The raw body of the finishing call (E4), the run's `workflowRunResponse`. */
  result?: string;
  invoker?: RunInvoker;
  callerIp?: string;
  /** DLQ entry of the step that failed the run. */
  dlqId?: string;
  /** The failure callback message sent when the run failed (the logs' failureFunction, the DLQ's failureCallbackInfo). */
  failureMessageId?: string;
  /** Created by `POST /v2/trigger`: the SDK's own Init for this id restarts it (contract §6.11). */
  restTrigger: boolean;
  /** Id of the message that started the run (its history entry 0). */
  initMessageId: string;
}

export type NewWorkflowRun = Omit<WorkflowRun, "updatedAt" | "completedAt" | "result" | "dlqId" | "failureMessageId">;

/** One entry of a run's history; the wire form is `{messageId, body: base64, callType}` (contract §4.4). */
export interface HistoryEntry {
  messageId: string;
  body: Buffer;
  callType: string;
  createdAt: number;
}

/**
 * What a delivery of a run's step carries, read where it was appended (docs/workflows.md "Deliveries"): the run and
 * its history up to and including the step's entry. The node that inserted the step leased to itself delivers it
 * with these at once, without reading them again.
 */
export interface StepDelivery {
  run: WorkflowRun;
  history: HistoryEntry[];
}

/** A registered `waitForEvent` (contract §6.4). */
export interface Waiter {
  waiterId: string;
  accountId: string;
  eventId: string;
  runId: string;
  url: string;
  /** Unix ms. */
  deadline: number;
  /** The wait request's headers, as E10 shows them. */
  headers: Record<string, string[]>;
  timeoutUrl: string;
  timeoutHeaders: Record<string, string[]>;
  timeoutBody?: string;
  /** The wait's step JSON; its result step is built from it. */
  step: Record<string, unknown>;
  /** The step's `timeout` as the SDK sent it ("7d", "30s"). */
  timeout: string;
  /** The message that delivers the timeout, held until the deadline. */
  timeoutMessageId: string;
  /** The wait request's headers read as a step publish with the run's settings: how the event is delivered. */
  deliverySpec: MessageSpec;
  createdAt: number;
}

// WorkflowLink lives in message.ts (a message spec holds it; the two files must not import each other).
export type { WorkflowLink } from "./message.js";

/** What the run list, bulk cancel and the logs filter on (contract E6, E11). */
export interface RunFilter {
  runIds?: string[];
  state?: RunState[];
  /** Prefix unless `urlExact`. */
  url?: string;
  urlExact?: boolean;
  label?: string;
  fromDate?: number;
  toDate?: number;
  createdAt?: number;
  callerIp?: string;
  flowControlKey?: string;
}

/** The body a delivery to the workflow endpoint carries: the history as JSON (contract §4.4). */
export function historyBody(entries: readonly HistoryEntry[]): Buffer {
  return Buffer.from(
    JSON.stringify(entries.map((e) => ({ messageId: e.messageId, body: e.body.toString("base64"), callType: e.callType }))),
  );
}

/** The history up to and including `messageId` (the cut-off parallel steps need, contract §4.4). */
export function historyUpTo(entries: readonly HistoryEntry[], messageId: string): HistoryEntry[] | undefined {
  const i = entries.findIndex((e) => e.messageId === messageId);
  return i < 0 ? undefined : entries.slice(0, i + 1);
}

/** A wait's result step (contract §6.4): `out` is the event data, base64; a timeout has no `out`. */
export function waitResultStep(w: Pick<Waiter, "step" | "eventId" | "timeout">, data: Buffer | undefined): Buffer {
  const step: Record<string, unknown> = { ...w.step, waitEventId: w.eventId, timeout: w.timeout };
  if (data === undefined) step.waitTimeout = true;
  else {
    step.out = data.toString("base64");
    step.waitTimeout = false;
  }
  return Buffer.from(JSON.stringify(step));
}

/** An invoked run's end, as its parent's Invoke step result (contract §6.5): `out` is a JSON string. */
export function invokeResultStep(invoker: RunInvoker, child: Pick<WorkflowRun, "state" | "result">): Buffer {
  const out: Record<string, unknown> = { isFailed: child.state === "RUN_FAILED", isCanceled: child.state === "RUN_CANCELED" };
  if (child.state === "RUN_SUCCESS") out.body = child.result ?? "";
  return Buffer.from(JSON.stringify({ ...invoker.step, out: JSON.stringify(out) }));
}

/**
 * The webhook call as event data (contract §6.6). `proto` is the URL scheme: the SDK rebuilds the call as a Request
 * from `${proto}://${host}${url}` (LazyWaitForWebhookStep.safeParseOut).
 */
export function webhookEventData(p: {
  proto: string;
  method: string;
  headers: Record<string, string[]>;
  body: Buffer;
  host: string;
  url: string;
}): Buffer {
  return Buffer.from(
    JSON.stringify({ method: p.method, header: p.headers, body: p.body.toString("base64"), proto: p.proto, host: p.host, url: p.url }),
  );
}

/**
 * The account's `UserID` as the SDK reads it from the token (contract §6.6: base64 JSON `{"UserID": …}`), or
 * undefined for a token of another shape.
 */
export function userIdOfToken(token: string): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64").toString("utf8")) as unknown;
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as { UserID?: unknown }).UserID === "string") {
      return (parsed as { UserID: string }).UserID;
    }
  } catch {
    // Not base64 JSON: the SDK's createWebhook cannot work with such a token either.
  }
  return undefined;
}

/** Run ids the SDK makes are `wfr_<id>`; anything printable without blanks or slashes is accepted. */
export const RUN_ID = /^[A-Za-z0-9._:~-]{1,256}$/;

/** A message of a run that the server publishes itself (notify results, invoke results, timeouts). */
export function runMessage(p: {
  id: string;
  accountId: string;
  url: string;
  spec: MessageSpec;
  body: Buffer;
  now: number;
  dueAt?: number;
  callerIp?: string;
}): NewMessage {
  const dueAt = p.dueAt ?? p.now;
  const m: NewMessage = {
    id: p.id,
    accountId: p.accountId,
    kind: "message",
    state: "CREATED",
    url: p.url,
    body: p.body,
    spec: p.spec,
    createdAt: p.now,
    notBefore: dueAt > p.now ? dueAt : 0,
    dueAt,
    retried: 0,
  };
  if (p.callerIp !== undefined) m.callerIp = p.callerIp;
  return m;
}

/** The run's settings applied to a step message's own spec (contract §4.2): what the step sets itself wins. */
export function withRunConfig(spec: MessageSpec, config: RunConfig, ownRetries: boolean): MessageSpec {
  const out: MessageSpec = { ...spec, headers: { ...config.headers, ...spec.headers } };
  if (!ownRetries) out.retries = config.retries;
  if (out.retryDelayExpr === undefined && config.retryDelayExpr !== undefined) out.retryDelayExpr = config.retryDelayExpr;
  if (out.flowControl === undefined && config.flowControl !== undefined) out.flowControl = config.flowControl;
  if (out.failureCallback === undefined && config.failureCallback !== undefined) out.failureCallback = config.failureCallback;
  if (out.labels === undefined && config.labels !== undefined) out.labels = config.labels;
  if (out.redact === undefined && config.redact !== undefined) out.redact = config.redact;
  if (out.dialect === undefined && config.dialect !== undefined) out.dialect = config.dialect;
  return out;
}

/** The settings a trigger's spec gives its run. */
export function runConfigOf(spec: MessageSpec): RunConfig {
  const c: RunConfig = { headers: spec.headers, retries: spec.retries };
  if (spec.retryDelayExpr !== undefined) c.retryDelayExpr = spec.retryDelayExpr;
  if (spec.flowControl !== undefined) c.flowControl = spec.flowControl;
  if (spec.failureCallback !== undefined) c.failureCallback = spec.failureCallback;
  if (spec.labels !== undefined) c.labels = spec.labels;
  if (spec.redact !== undefined) c.redact = spec.redact;
  if (spec.dialect !== undefined) c.dialect = spec.dialect;
  return c;
}

/** Reads a run id, refusing one no run could have, with a 400 naming `field`. */
export function validRunId(raw: string, field: string): string {
  const id = raw.trim();
  if (!RUN_ID.test(id)) throw invalidField(field, `"${raw}" is not a workflow run id (letters, digits, . _ : ~ -)`);
  return id;
}

/** A step the server appends to a run (shaped as the store's RunFollowUp). */
export interface ServerStep {
  accountId: string;
  runId: string;
  step: { item: { message: NewMessage }; callType: string };
}

/** The result step an invoked run's end appends to its parent (contract §6.5); undefined when nobody invoked it. */
export function invokeFollowUp(
  run: Pick<WorkflowRun, "invoker" | "accountId" | "callerIp">,
  state: RunState,
  result: string | undefined,
  now: number,
): ServerStep | undefined {
  const inv = run.invoker;
  if (!inv) return undefined;
  const message = runMessage({
    id: newMessageId(now),
    accountId: run.accountId,
    url: inv.workflowUrl,
    spec: inv.spec,
    body: invokeResultStep(inv, result === undefined ? { state } : { state, result }),
    now,
    ...(run.callerIp !== undefined ? { callerIp: run.callerIp } : {}),
  });
  return { accountId: run.accountId, runId: inv.workflowRunId, step: { item: { message }, callType: "step" } };
}
