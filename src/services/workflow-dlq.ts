import type { Dialect } from "../domain/dialect.js";
import { newMessageId, ulid } from "../domain/ids.js";
import type { MessageSpec } from "../domain/message.js";
import { type ConfigSource, parsePublishConfig } from "../domain/publish-config.js";
import type { Account, DlqEntry } from "../domain/records.js";
import { type NewWorkflowRun, type RunConfig, runMessage, type WorkflowRun } from "../domain/workflow.js";
import { invalidField, notFound } from "../errors.js";
import type { DlqFilter } from "../store/dlq-store.js";
import type { Services } from "./context.js";

/*
 * The workflow DLQ (docs/workflows.md "DLQ"; contract §6.10): entries are the failed steps of runs. Restart starts a
 * new run from the payload; resume starts a new run that keeps the history before the failed step and delivers that
 * step again. Both take a new run id (the contract leaves it open) and remove the entry.
 */

export interface NewRunRef {
  workflowRunId: string;
  workflowCreatedAt: number;
}

/** A step message's spec from the run's settings, with the request's retries and flow control overriding them. */
function specOf(config: RunConfig, overrides: Partial<Pick<MessageSpec, "retries" | "flowControl">>): MessageSpec {
  const spec: MessageSpec = { method: "POST", headers: config.headers, retries: overrides.retries ?? config.retries };
  if (config.retryDelayExpr !== undefined) spec.retryDelayExpr = config.retryDelayExpr;
  const flow = overrides.flowControl ?? config.flowControl;
  if (flow !== undefined) spec.flowControl = flow;
  if (config.failureCallback !== undefined) spec.failureCallback = config.failureCallback;
  if (config.labels !== undefined) spec.labels = config.labels;
  if (config.redact !== undefined) spec.redact = config.redact;
  return spec;
}

/** `Upstash-Retries` and `Upstash-Flow-Control-*` on a resume or restart (contract E13). */
export function runOverrides(services: Services, account: Account, source: ConfigSource, dialect: Dialect) {
  const parsed = parsePublishConfig(source, dialect, services.plans.limitsOf(account), services.clock.now());
  const o: Partial<Pick<MessageSpec, "retries" | "flowControl">> = {};
  if (parsed.raw("retries") !== undefined) o.retries = parsed.spec.retries;
  if (parsed.spec.flowControl) o.flowControl = parsed.spec.flowControl;
  return o;
}

async function entryAndRun(services: Services, account: Account, dlqId: string): Promise<{ entry: DlqEntry; run: WorkflowRun }> {
  const entry = await services.store.dlqGet({ accountId: account.id, dlqId });
  const runId = entry?.message.spec.workflow?.runId;
  if (!entry || runId === undefined) throw notFound(`workflow dlq message ${dlqId}`);
  const run = await services.store.workflowRunGet({ accountId: account.id, runId });
  if (!run) throw invalidField("dlqIds", `the run ${runId} of ${dlqId} is past retention`);
  return { entry, run };
}

/** Resume (keep the history before the failed step) or restart (from the payload) one entry. */
export async function rerunFromDlq(
  services: Services,
  account: Account,
  dlqId: string,
  mode: "resume" | "restart",
  overrides: Partial<Pick<MessageSpec, "retries" | "flowControl">>,
): Promise<NewRunRef> {
  const { entry, run } = await entryAndRun(services, account, dlqId);
  const now = services.clock.now();
  const runId = `wfr_${ulid(now)}`;
  const spec = { ...specOf(run.config, overrides), workflow: { runId, role: "step" as const } };
  const history = mode === "resume" ? await services.store.workflowHistory({ accountId: account.id, runId: run.runId }) : [];
  const failedAt = history.findIndex((e) => e.messageId === entry.message.id);
  const kept = failedAt > 0 ? history.slice(0, failedAt) : [];
  const message = runMessage({
    id: newMessageId(now),
    accountId: account.id,
    url: kept.length > 0 ? entry.message.url : run.url,
    spec: kept.length > 0 ? { ...entry.message.spec, ...spec, headers: entry.message.spec.headers } : spec,
    body: kept.length > 0 ? (entry.message.body ?? Buffer.alloc(0)) : run.initialBody,
    now,
    ...(run.callerIp !== undefined ? { callerIp: run.callerIp } : {}),
  });
  const newRun: NewWorkflowRun = {
    accountId: account.id,
    runId,
    url: run.url,
    state: "RUN_STARTED",
    createdAt: now,
    config: { ...run.config, retries: spec.retries, ...(spec.flowControl ? { flowControl: spec.flowControl } : {}) },
    initialBody: run.initialBody,
    restTrigger: false,
    initMessageId: kept[0]?.messageId ?? message.id,
  };
  if (run.label !== undefined) newRun.label = run.label;
  if (run.callerIp !== undefined) newRun.callerIp = run.callerIp;
  await services.store.workflowRunCreate({
    run: newRun,
    item: { message },
    now,
    ...(kept.length > 0 ? { history: kept } : {}),
  });
  await services.store.dlqDelete({ accountId: account.id, filter: { dlqIds: [dlqId] } });
  services.dispatcher.nudge();
  return { workflowRunId: runId, workflowCreatedAt: now };
}

/** Bulk form: `dlqIds`, or the filters (workflow entries only), up to `count`. */
export async function rerunManyFromDlq(
  services: Services,
  account: Account,
  filter: DlqFilter,
  count: number,
  mode: "resume" | "restart",
  overrides: Partial<Pick<MessageSpec, "retries" | "flowControl">>,
): Promise<{ workflowRuns: NewRunRef[]; cursor?: string }> {
  const page = await services.store.dlqList({
    accountId: account.id,
    filter: { ...filter, workflowOnly: true },
    count,
    order: "earliestFirst",
  });
  const workflowRuns: NewRunRef[] = [];
  for (const e of page.entries) workflowRuns.push(await rerunFromDlq(services, account, e.dlqId, mode, overrides));
  return page.cursor !== undefined ? { workflowRuns, cursor: page.cursor } : { workflowRuns };
}

/** Sends the failure callback of an entry again (contract E14). */
export async function retryFailureCallback(services: Services, account: Account, dlqId: string): Promise<NewRunRef> {
  const { entry, run } = await entryAndRun(services, account, dlqId);
  const failure = run.config.failureCallback;
  if (!failure) throw invalidField("dlqId", `the run ${run.runId} of ${dlqId} has no failure callback`);
  const now = services.clock.now();
  const body = {
    status: entry.response.status ?? 0,
    header: entry.response.headers,
    body: entry.response.body.toString("base64"),
    retried: entry.message.retried,
    maxRetries: entry.message.spec.retries,
    sourceMessageId: entry.message.id,
    url: run.url,
    method: entry.message.spec.method,
    sourceBody: run.initialBody.toString("base64"),
    workflowRunId: run.runId,
    workflowCreatedAt: run.createdAt,
    dlqId,
  };
  const message = runMessage({
    id: newMessageId(now),
    accountId: account.id,
    url: failure.url,
    spec: {
      method: failure.method ?? "POST",
      headers: { ...failure.headers, "Content-Type": ["application/json"] },
      retries: failure.retries ?? run.config.retries,
    },
    body: Buffer.from(JSON.stringify(body)),
    now,
  });
  // The run's logs and its DLQ entry now show this callback's state (docs/workflows.md "Failures").
  const sent = await services.store.workflowFailureResend({ accountId: account.id, runId: run.runId, item: { message }, now });
  if (!sent) throw invalidField("dlqId", `the run ${run.runId} of ${dlqId} is past retention`);
  services.dispatcher.nudge();
  return { workflowRunId: run.runId, workflowCreatedAt: run.createdAt };
}

/** Runs one `workflowCreatedAt` filter reads at most: runs are created one per ms at most per id (contract E12). */
const CREATED_AT_RUNS = 100;

/**
 * The DLQ list's `workflowCreatedAt` filter: the entries of the runs created at that time (ms), together with any
 * `workflowRunId` filter. Undefined when no run matches, so nothing does.
 */
export async function withCreatedAtRuns(
  services: Services,
  account: Account,
  filter: DlqFilter,
  createdAt: number | undefined,
): Promise<DlqFilter | undefined> {
  if (createdAt === undefined) return filter;
  const { runs } = await services.store.workflowRunList({ accountId: account.id, filter: { createdAt }, count: CREATED_AT_RUNS });
  const ids = runs.map((r) => r.runId).filter((id) => filter.workflowRunId === undefined || filter.workflowRunId.includes(id));
  return ids.length === 0 ? undefined : { ...filter, workflowRunId: ids, workflowOnly: true };
}
