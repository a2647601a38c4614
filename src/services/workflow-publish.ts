import type { Dialect } from "../domain/dialect.js";
import { unsendableHeaders } from "../domain/headers.js";
import type { Message, NewMessage } from "../domain/message.js";
import type { Account } from "../domain/records.js";
import { type ConfigSource, type ParsedConfig, parseBool, parseHttpUrl } from "../domain/publish-config.js";
import {
  type NewWorkflowRun,
  type RunInvoker,
  runConfigOf,
  type StepDelivery,
  validRunId,
  type WorkflowRun,
} from "../domain/workflow.js";
import { AppError, invalidField } from "../errors.js";
import type { InsertItem } from "../store/store-params.js";
import type { PublishedMessage, Services } from "./context.js";
import { parseInvokeRequest } from "./workflow-invoke.js";

/*
 * Workflow messages on the publish path (docs/workflows.md "Messages of a run"; contract §4): a publish or batch item
 * carrying the run id header belongs to a run. Init creates the run, a step appends to its history, a call goes to a
 * third party with its callback bound to the run.
 */

/** The run id header of a publish, when it has one: the publish is then a workflow message. */
export function workflowRunIdOf(source: ConfigSource, dialect: Dialect): string | undefined {
  const raw = source.headers[dialect.key("Workflow-RunId")];
  return Array.isArray(raw) ? raw[0] : raw;
}

/**
 * The SDK forwards every header of the request that started a run (contract §2.2, "Forwarded transport headers"):
 * hop-by-hop and framing ones are dropped here instead of refused, and the run's own headers that Ferry sets on every
 * delivery (`Workflow-*`) are not forwarded again.
 */
export function withoutTransportHeaders(source: ConfigSource, dialect: Dialect): ConfigSource {
  const headers: ConfigSource["headers"] = Object.create(null) as ConfigSource["headers"];
  const forward = dialect.key("Forward-");
  const failureForward = dialect.key("Failure-Callback-Forward-");
  const ownWorkflow = dialect.key("Workflow-");
  const keep = new Set([dialect.key("Workflow-Sdk-Version"), dialect.key("Workflow-Invoke-Count")]);
  for (const [name, value] of Object.entries(source.headers)) {
    const target = name.startsWith(forward)
      ? name.slice(forward.length)
      : name.startsWith(failureForward)
        ? name.slice(failureForward.length)
        : undefined;
    if (target !== undefined && unsendableHeaders.has(target)) continue;
    if (target !== undefined && target.startsWith(ownWorkflow) && !keep.has(target)) {
      // Failure callbacks keep theirs: the SDK tells a failure callback by them (Is-Failure, Failure-Callback).
      if (name.startsWith(forward)) continue;
    }
    headers[name] = value;
  }
  return { headers, query: source.query };
}

const CALL_TYPES = new Set(["step", "toCallback"]);

export interface WorkflowPublishInput {
  accountId: string;
  /** The publisher's account, as the publish read it: the fast path's attempt needs not read it again. */
  account: Account;
  source: ConfigSource;
  parsed: ParsedConfig;
  /** The message publish built (one target): its spec, id and due time are kept. */
  message: NewMessage;
  now: number;
  /** The names the publish used (docs/messaging.md "Dialects"). */
  dialect: Dialect;
  /** Created by `POST /v2/trigger`: the SDK restarts it with its own Init (contract §6.11). */
  restTrigger?: boolean;
}

function endedError(dialect: Dialect, runId: string, run: WorkflowRun | undefined): AppError {
  const field = dialect.header("Workflow-RunId");
  return run
    ? invalidField(field, `workflow run ${runId} has ended (${run.state}); it accepts no more steps`)
    : invalidField(field, `workflow run ${runId} does not exist`);
}

/** Publishes one workflow message: creates, appends to or calls out of its run. */
export async function publishWorkflowMessage(services: Services, input: WorkflowPublishInput): Promise<PublishedMessage> {
  const { store } = services;
  const { parsed, message: m, now, dialect } = input;
  const runId = validRunId(parsed.raw("workflow-runid")!, dialect.header("Workflow-RunId"));
  const initRaw = parsed.raw("workflow-init");
  const init = initRaw !== undefined && parseBool(initRaw, dialect.header("Workflow-Init"));
  const callType = parsed.raw("workflow-calltype")?.trim() ?? "step";
  if (!CALL_TYPES.has(callType)) {
    throw invalidField(dialect.header("Workflow-CallType"), `"${callType}" is not one of step, toCallback`);
  }
  const urlRaw = parsed.raw("workflow-url");
  const url = urlRaw === undefined ? m.url : parseHttpUrl(urlRaw, dialect.header("Workflow-Url"));

  if (callType === "toCallback") {
    const run = await store.workflowRunGet({ accountId: input.accountId, runId });
    if (!run || run.state !== "RUN_STARTED") throw endedError(dialect, runId, run);
    m.spec = { ...m.spec, workflow: { runId, role: "call" } };
    // The call's result comes back through its callback: give it the run's retries, not the call's (0 by default),
    // so that one failed callback attempt does not lose the result (contract §6.3).
    if (m.spec.callback && m.spec.callback.retries === undefined) {
      m.spec.callback = { ...m.spec.callback, retries: run.config.retries };
    }
    const [result] = await store.messageInsertMany({ items: [{ message: m }], now, dedupWindowMs: 0 });
    services.dispatcher.nudge();
    return { messageId: result!.messageId, url: m.url, deduplicated: false };
  }

  if (init) return createRun(services, input, runId, url);

  // The run's settings apply in the append's transaction, from the run row it locks: one read of the run.
  m.spec = { ...m.spec, workflow: { runId, role: "step" } };
  const ownRetries = parsed.raw("retries") !== undefined;
  const appended = await withFastPath(services, input, m, (item) =>
    store.workflowStepAppend({
      accountId: input.accountId,
      runId,
      steps: [{ item, callType: "step", runConfig: { ownRetries } }],
      now,
    }),
  );
  if (!appended.appended) throw endedError(dialect, runId, appended.run);
  return { messageId: m.id, url: m.url, deduplicated: false };
}

type Appended = Awaited<ReturnType<Services["store"]["workflowStepAppend"]>>;
type Created = Awaited<ReturnType<Services["store"]["workflowRunCreate"]>>;

/**
 * The publish fast path for a run's message (as src/services/publish.ts does for a plain one): a message due now is
 * inserted leased to this node when the dispatcher has room, and handed over right after the commit with its run and
 * history (`delivery`), so the next call of the run goes out without a claim and without reading the run again
 * (issue 25's step latency: dispatched when the step publish commits, not on a poll). The store refuses the lease
 * under flow control or the account's global bound (the run's settings are only known there); such a message, or
 * one due later, waits for a claim.
 */
async function withFastPath<R extends Appended | Created>(
  services: Services,
  input: WorkflowPublishInput,
  m: NewMessage,
  write: (item: InsertItem) => Promise<R>,
  deliveryOf: (r: R, message: Message) => StepDelivery | undefined = (r) =>
    "delivery" in r ? r.delivery : undefined,
): Promise<R> {
  const { dispatcher, config, clock } = services;
  const reserved = m.dueAt <= input.now ? dispatcher.reserve(1) : 0;
  const item: InsertItem =
    reserved > 0 ? { message: m, leaseOwner: dispatcher.owner, leaseUntil: input.now + config.leaseMs } : { message: m };
  let written: R;
  try {
    written = await write(item);
  } catch (error) {
    dispatcher.deliverLeased([], reserved);
    throw error;
  }
  const inserted = insertedOf(written);
  if (inserted?.leaseOwner !== undefined) {
    const delivery = deliveryOf(written, inserted);
    dispatcher.deliverLeased([inserted], reserved, input.account, delivery && new Map([[inserted.id, delivery]]));
    return written;
  }
  // Not leased: the claim takes it when it is due.
  dispatcher.deliverLeased([], reserved);
  if (!inserted) return written;
  if (inserted.dueAt <= clock.now()) dispatcher.nudge();
  else dispatcher.noteDue(inserted.dueAt);
  return written;
}

function insertedOf(r: Appended | Created): Message | undefined {
  if ("appended" in r) return r.appended ? r.results[0]?.message : undefined;
  return r.created ? r.result.message : undefined;
}

/** `Init: true`: a new run (contract §4.2), or an invoked one (§6.5) whose payload is the invoke request's `body`. */
async function createRun(
  services: Services,
  input: WorkflowPublishInput,
  runId: string,
  url: string,
): Promise<PublishedMessage> {
  const { store } = services;
  const { parsed, message: m, now, dialect } = input;
  const invokeRaw = parsed.raw("workflow-invoke");
  const invoke = invokeRaw !== undefined && parseBool(invokeRaw, dialect.header("Workflow-Invoke"));
  let initialBody = m.body ?? Buffer.alloc(0);
  let invoker: RunInvoker | undefined;
  if (invoke) {
    const parent = await parseInvokeRequest(services, input.accountId, initialBody, now, dialect);
    invoker = parent.invoker;
    initialBody = parent.body;
  }
  m.body = initialBody.length > 0 ? initialBody : undefined;
  m.spec = { ...m.spec, workflow: { runId, role: "step" } };
  const run: NewWorkflowRun = {
    accountId: input.accountId,
    runId,
    url,
    state: "RUN_STARTED",
    createdAt: now,
    config: runConfigOf(m.spec),
    initialBody,
    restTrigger: input.restTrigger === true,
    initMessageId: m.id,
  };
  if (m.spec.labels !== undefined) run.label = m.spec.labels.join(",");
  if (invoker) run.invoker = invoker;
  if (m.callerIp !== undefined) run.callerIp = m.callerIp;
  const bySdk = parsed.raw("workflow-trigger-by-sdk");
  const restartRest = bySdk !== undefined && bySdk.trim().toLowerCase() === "true";
  const created = await withFastPath(
    services,
    input,
    m,
    (item) => store.workflowRunCreate({ run, item, now, restartRest }),
    // The new run's history is its entry 0, the payload.
    () => ({
      run: { ...run, updatedAt: now },
      history: [{ messageId: m.id, body: initialBody, callType: "step", createdAt: now }],
    }),
  );
  if (!created.created) {
    // A second Init for the same id (the SDK retrying its trigger): nothing is written (contract §4.2).
    return { messageId: created.run?.initMessageId ?? m.id, url: m.url, deduplicated: true };
  }
  return { messageId: m.id, url: m.url, deduplicated: false };
}

