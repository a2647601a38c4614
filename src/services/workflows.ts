import type { Dialect } from "../domain/dialect.js";
import { parseDurationMs } from "../domain/duration.js";
import { emptyHeaderMap } from "../domain/headers.js";
import { newMessageId, ulid } from "../domain/ids.js";
import { type ConfigSource, parsePublishConfig } from "../domain/publish-config.js";
import type { Account } from "../domain/records.js";
import {
  invokeFollowUp,
  type RunFilter,
  runMessage,
  validRunId,
  type Waiter,
  waitResultStep,
  withRunConfig,
  type WorkflowRun,
} from "../domain/workflow.js";
import { invalidField, notFound } from "../errors.js";
import type { Services } from "./context.js";
import { withoutTransportHeaders } from "./workflow-publish.js";

/*
 * Run use cases (docs/workflows.md "Endpoints"; contract §3, §4.6, §6.4): finish, cancel, wait, notify, waiters.
 */

async function startedRun(services: Services, account: Account, runId: string, field: string): Promise<WorkflowRun> {
  const run = await services.store.workflowRunGet({ accountId: account.id, runId });
  if (!run) throw notFound(`workflow run ${runId}`);
  if (run.state !== "RUN_STARTED") throw invalidField(field, `workflow run ${runId} has ended (${run.state})`);
  return run;
}

/**
 * E4/E5: the run's last call finishes it with its result, or `context.cancel()` cancels it. A run that already ended
 * answers 400, which the SDK swallows (contract §4.6); an unknown one 404.
 */
export async function endRun(
  services: Services,
  account: Account,
  runId: string,
  cancel: boolean,
  result: string | undefined,
): Promise<void> {
  const now = services.clock.now();
  const state = cancel ? "RUN_CANCELED" : "RUN_SUCCESS";
  // One transaction, no read before it: the store ends the run only if it is started, and builds the invoker's
  // result step (contract §6.5) from the run's row.
  const ended = await services.store.workflowRunEnd({
    accountId: account.id,
    runId,
    state,
    ...(result !== undefined && !cancel ? { result } : {}),
    now,
    followInvoker: true,
  });
  if (!ended.run) throw notFound(`workflow run ${runId}`);
  if (!ended.ended) throw invalidField("workflowRunId", `workflow run ${runId} has ended (${ended.run.state})`);
  if (ended.followedUp) services.dispatcher.nudge();
}

/** E6: cancels the matching started runs (at most `count`); unknown or ended ids count 0 (contract §6.8). */
export async function cancelRuns(services: Services, account: Account, filter: RunFilter, count: number): Promise<number> {
  const now = services.clock.now();
  const cancelled = await services.store.workflowRunCancelMany({ accountId: account.id, filter, count, now });
  // An invoked run's parent learns of the cancel (contract §6.5): after the cancel's own transaction, because a bulk
  // cancel may end many runs at once; a parent that ended meanwhile accepts nothing, which is what it should get.
  for (const run of cancelled) {
    const followUp = invokeFollowUp(run, "RUN_CANCELED", undefined, now);
    if (followUp) {
      await services.store.workflowStepAppend({ accountId: followUp.accountId, runId: followUp.runId, steps: [followUp.step], now });
      services.dispatcher.nudge();
    }
  }
  return cancelled.length;
}

/** A wait request's body (contract §6.4). */
export interface WaitRequest {
  url: string;
  timeout: string;
  timeoutUrl: string;
  timeoutHeaders: Record<string, string[]>;
  timeoutBody?: string;
  step: Record<string, unknown>;
}

/** Publish headers given as `{name: [values]}` (wait timeouts, invoke) as a ConfigSource. */
function sourceOf(headers: Record<string, string[]>): ConfigSource {
  const out = emptyHeaderMap<string | string[]>();
  for (const [name, values] of Object.entries(headers)) out[name.toLowerCase()] = values.length === 1 ? values[0]! : values;
  return { headers: out, query: new Map() };
}

/**
 * E8: `waitForEvent`. Registers a waiter whose eventual delivery uses the request's headers as publish headers, and
 * a timeout message held until the deadline. An event kept for this run (lookback) resolves the wait at once.
 */
export async function waitForEvent(
  services: Services,
  account: Account,
  eventId: string,
  requestHeaders: ConfigSource,
  request: WaitRequest,
  dialect: Dialect,
): Promise<void> {
  const { store } = services;
  const now = services.clock.now();
  const runIdRaw = requestHeaders.headers[dialect.key("Workflow-RunId")];
  const runIdHeader = Array.isArray(runIdRaw) ? runIdRaw[0] : runIdRaw;
  if (runIdHeader === undefined) throw invalidField(dialect.header("Workflow-RunId"), "is required on a wait");
  const runId = validRunId(runIdHeader, dialect.header("Workflow-RunId"));
  const timeoutMs = parseDurationMs(request.timeout, "timeout");
  if (timeoutMs <= 0) throw invalidField("timeout", `"${request.timeout}" must be greater than 0`);
  const run = await startedRun(services, account, runId, dialect.header("Workflow-RunId"));
  const limits = services.plans.limitsOf(account);
  const delivery = parsePublishConfig(withoutTransportHeaders(requestHeaders, dialect), dialect, limits, now);
  const timeoutConfig = parsePublishConfig(
    withoutTransportHeaders(sourceOf(request.timeoutHeaders), dialect),
    dialect,
    limits,
    now,
  );
  const waiterId = `wtr_${ulid(now)}`;
  const deliverySpec = { ...withRunConfig(delivery.spec, run.config, false), workflow: { runId, role: "step" as const } };
  // The timeout is delivered like a step publish of its own headers (contract §6.4).
  const waiter: Waiter = {
    waiterId,
    accountId: account.id,
    eventId,
    runId,
    url: request.url,
    deadline: now + timeoutMs,
    headers: headerValues(requestHeaders),
    timeoutUrl: request.timeoutUrl,
    timeoutHeaders: request.timeoutHeaders,
    step: request.step,
    timeout: request.timeout,
    timeoutMessageId: newMessageId(now),
    deliverySpec,
    createdAt: now,
  };
  if (request.timeoutBody !== undefined) waiter.timeoutBody = request.timeoutBody;
  const timeoutMessage = runMessage({
    id: waiter.timeoutMessageId,
    accountId: account.id,
    url: request.timeoutUrl,
    spec: {
      ...withRunConfig(timeoutConfig.spec, run.config, false),
      workflow: { runId, role: "timeout", waiterId },
    },
    body: waitResultStep(waiter, undefined),
    now,
    dueAt: waiter.deadline,
  });
  const registered = await store.workflowWaitRegister({ waiter, timeoutItem: { message: timeoutMessage }, now });
  if (registered.registered) {
    services.dispatcher.noteDue(waiter.deadline);
    return;
  }
  if (registered.reason === "ended") {
    throw invalidField(dialect.header("Workflow-RunId"), `workflow run ${runId} has ended (${registered.run?.state})`);
  }
  const message = resultMessage(waiter, registered.data, now);
  await store.workflowWaitResolve({ accountId: account.id, runId, eventId, step: { item: { message }, callType: "step" }, now });
  services.dispatcher.nudge();
}

function headerValues(source: ConfigSource): Record<string, string[]> {
  const out: Record<string, string[]> = emptyHeaderMap();
  for (const [name, value] of Object.entries(source.headers)) {
    if (value === undefined || name === "authorization") continue;
    out[name] = Array.isArray(value) ? value : [value];
  }
  return out;
}

/** The message delivering a wait's result to the run. */
function resultMessage(waiter: Waiter, data: Buffer, now: number) {
  return runMessage({
    id: newMessageId(now),
    accountId: waiter.accountId,
    url: waiter.url,
    spec: waiter.deliverySpec,
    body: waitResultStep(waiter, data),
    now,
  });
}

export interface NotifyResult {
  waiter: Waiter;
  messageId: string;
}

/**
 * E9: delivers the event to every waiter of `eventId` (of one run when `runId` is given). With a run id and nobody
 * waiting, the event is kept for a later wait of that run (lookback, contract §6.4).
 */
export async function notify(
  services: Services,
  account: Account,
  eventId: string,
  data: Buffer,
  runId?: string,
): Promise<NotifyResult[]> {
  const now = services.clock.now();
  if (runId !== undefined) {
    const run = await services.store.workflowRunGet({ accountId: account.id, runId });
    if (!run) throw notFound(`workflow run ${runId}`);
  }
  // A wait of this run may register between the listing and the apply; the store then keeps no lookback event and
  // this notify lists again (bounded: each round needs a wait that registered in between).
  for (let round = 0; ; round++) {
    const waiters = await services.store.workflowWaiterList({ accountId: account.id, eventId, ...(runId ? { runId } : {}) });
    const deliveries = waiters.map((waiter) => ({
      waiter,
      waiterId: waiter.waiterId,
      runId: waiter.runId,
      step: { item: { message: resultMessage(waiter, data, now) }, callType: "step" },
    }));
    const resolved = new Set(
      await services.store.workflowNotifyApply({
        accountId: account.id,
        deliveries: deliveries.map(({ waiterId, runId: r, step }) => ({ waiterId, runId: r, step })),
        ...(runId !== undefined ? { lookback: { runId, eventId, data } } : {}),
        now,
      }),
    );
    if (resolved.size > 0) services.dispatcher.nudge();
    const missed =
      resolved.size === 0 && runId !== undefined && round < NOTIFY_ROUNDS
        ? await services.store.workflowWaiterList({ accountId: account.id, eventId, runId })
        : [];
    if (missed.length > 0) continue;
    return deliveries
      .filter((d) => resolved.has(d.waiterId))
      .map((d) => ({ waiter: d.waiter, messageId: d.step.item.message.id }));
  }
}

/** Rounds of a notify with a run id whose waiter registered while it was being applied (docs/workflows.md). */
const NOTIFY_ROUNDS = 3;

/** Bad event ids are refused by the route; this checks a run id path segment. */
export function runIdParam(raw: string): string {
  return validRunId(decodeURIComponent(raw), "workflowRunId");
}

export function eventIdParam(raw: string): string {
  const id = decodeURIComponent(raw);
  if (id.length === 0 || id.length > 512) throw invalidField("eventId", "must be 1 to 512 characters");
  return id;
}

