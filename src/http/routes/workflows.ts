import type { FastifyInstance } from "fastify";
import { canonicalHeaderName } from "../../domain/headers.js";
import { ulid } from "../../domain/ids.js";
import { RUN_STATES, type RunFilter, type RunState, userIdOfToken, webhookEventData } from "../../domain/workflow.js";
import { publish } from "../../services/publish.js";
import { runActivity } from "../../services/workflow-activity.js";
import { rerunFromDlq, rerunManyFromDlq, retryFailureCallback, runOverrides } from "../../services/workflow-dlq.js";
import type { DlqFilter } from "../../store/dlq-store.js";
import { restAfter, splitDestination } from "../destination.js";
import { invalidField, notFound } from "../../errors.js";
import type { Services } from "../../services/context.js";
import {
  cancelRuns,
  endRun,
  eventIdParam,
  notify,
  runIdParam,
  waitForEvent,
} from "../../services/workflows.js";
import { jsonBody, rawBody } from "../body.js";
import { parseWaitRequest } from "../bodies/workflows.js";
import { readable } from "../plugins/auth.js";
import { intParam, multi, type Query, single } from "../query.js";
import { historyView, runLogView, waiterView } from "../views/workflow-view.js";
import type {
  HookReceived,
  Notified,
  RunRef,
  RunRefs,
  RunsCancelled,
  WorkflowAck,
  WorkflowDlqDeleted,
  WorkflowRunPage,
} from "../schemas/workflows.js";

/** `fromDate`/`toDate` and the like: unix ms. */
function msParam(query: Query, key: string): number | undefined {
  const raw = single(query, key);
  if (raw === undefined || raw === "") return undefined;
  if (!/^\d{1,16}$/.test(raw.trim())) throw invalidField(key, `"${raw}" must be unix milliseconds`);
  return Number(raw);
}

/** The run filters of bulk cancel and logs (contract E6, E11). */
export function runFilterFromQuery(query: Query): RunFilter {
  const filter: RunFilter = {};
  const ids = [...(multi(query, "workflowRunIds") ?? []), ...(multi(query, "workflowRunId") ?? [])];
  if (ids.length > 0) filter.runIds = ids;
  const url = single(query, "workflowUrl");
  if (url !== undefined && url !== "") filter.url = url;
  const exact = single(query, "workflowUrlExactMatch");
  if (exact !== undefined) {
    if (exact !== "true" && exact !== "false") throw invalidField("workflowUrlExactMatch", `"${exact}" must be true or false`);
    filter.urlExact = exact === "true";
  }
  const state = multi(query, "state");
  if (state) {
    for (const s of state) {
      if (!(RUN_STATES as readonly string[]).includes(s)) {
        throw invalidField("state", `"${s}" is not one of ${RUN_STATES.join(", ")}`);
      }
    }
    filter.state = state as RunState[];
  }
  const label = single(query, "label");
  if (label !== undefined && label !== "") filter.label = label;
  const callerIp = single(query, "callerIp");
  if (callerIp !== undefined && callerIp !== "") filter.callerIp = callerIp;
  const flowKey = single(query, "flowControlKey");
  if (flowKey !== undefined && flowKey !== "") filter.flowControlKey = flowKey;
  const from = msParam(query, "fromDate");
  if (from !== undefined) filter.fromDate = from;
  const to = msParam(query, "toDate");
  if (to !== undefined) filter.toDate = to;
  const created = msParam(query, "workflowCreatedAt");
  if (created !== undefined) filter.createdAt = created;
  return filter;
}

/**
 * The workflow endpoints the official SDK calls (docs/workflows.md "Endpoints", contract §3): runs, bulk cancel,
 * wait, notify, waiters and the run logs. Same paths in both dialects; headers follow the dialect.
 */
export function workflowRoutes(app: FastifyInstance, services: Services): void {
  app.get<{ Params: { id: string } }>("/v2/workflows/runs/:id", readable, async (request) => {
    const runId = runIdParam(request.params.id);
    const run = await services.store.workflowRunGet({ accountId: request.account.id, runId });
    // 404 is how the SDK's lazy fetch learns the run ended (contract E7).
    if (!run || run.state !== "RUN_STARTED") throw notFoundRun(runId, run?.state);
    return historyView(await services.store.workflowHistory({ accountId: request.account.id, runId }));
  });

  type EndRun = { Params: { id: string }; Querystring: Query };
  app.delete<EndRun>("/v2/workflows/runs/:id", async (request, reply): Promise<WorkflowAck> => {
    const runId = runIdParam(request.params.id);
    const cancelRaw = single(request.query, "cancel") ?? "false";
    if (cancelRaw !== "true" && cancelRaw !== "false") throw invalidField("cancel", `"${cancelRaw}" must be true or false`);
    const body = rawBody(request);
    await endRun(services, request.account, runId, cancelRaw === "true", body.length > 0 ? body.toString("utf8") : undefined);
    reply.status(200);
    return {};
  });

  app.delete<{ Querystring: Query }>("/v2/workflows/runs", async (request): Promise<RunsCancelled> => {
    const count = intParam(request.query, "count", 1, 10_000) ?? 100;
    const filter = runFilterFromQuery(request.query);
    return { cancelled: await cancelRuns(services, request.account, filter, count) };
  });

  app.post<{ Params: { eventId: string } }>("/v2/wait/:eventId", async (request): Promise<WorkflowAck> => {
    const eventId = eventIdParam(request.params.eventId);
    const wait = parseWaitRequest(jsonBody(request));
    await waitForEvent(services, request.account, eventId, { headers: request.headers, query: new Map() }, wait, request.dialect);
    return {};
  });

  type Account = Parameters<typeof notify>[1];
  const notifyHandler = async (account: Account, eventId: string, data: Buffer, runId?: string) => {
    const results = await notify(services, account, eventId, data, runId);
    return results.map((r): Notified => ({ waiter: waiterView(r.waiter), messageId: r.messageId }));
  };
  app.post<{ Params: { eventId: string } }>("/v2/notify/:eventId", async (request) =>
    notifyHandler(request.account, eventIdParam(request.params.eventId), rawBody(request)),
  );
  app.post<{ Params: { runId: string; eventId: string } }>("/v2/notify/:runId/:eventId", async (request) =>
    notifyHandler(
      request.account,
      eventIdParam(request.params.eventId),
      rawBody(request),
      runIdParam(request.params.runId),
    ),
  );

  app.get<{ Params: { eventId: string } }>("/v2/waiters/:eventId", readable, async (request) => {
    const eventId = eventIdParam(request.params.eventId);
    const waiters = await services.store.workflowWaiterList({ accountId: request.account.id, eventId });
    return waiters.map(waiterView);
  });

  app.get<{ Querystring: Query }>("/v2/workflows/events", readable, async (request): Promise<WorkflowRunPage> => {
    const count = intParam(request.query, "count", 1, 100) ?? 10;
    const cursor = single(request.query, "cursor");
    if (cursor !== undefined && cursor !== "" && !/^\d+$/.test(cursor)) throw invalidField("cursor", `"${cursor}" is not a cursor`);
    const groupBy = single(request.query, "groupBy");
    if (groupBy !== undefined && groupBy !== "workflowRunId") throw invalidField("groupBy", `"${groupBy}" must be workflowRunId`);
    const filter = runFilterFromQuery(request.query);
    const page = await services.store.workflowRunList({
      accountId: request.account.id,
      filter,
      count,
      ...(cursor ? { cursor } : {}),
    });
    const runs = await Promise.all(
      page.runs.map(async (run) => {
        const history = await services.store.workflowHistory({ accountId: run.accountId, runId: run.runId });
        return runLogView(run, history, await runActivity(services, run, history));
      }),
    );
    return page.cursor !== undefined ? { cursor: page.cursor, runs } : { runs };
  });
}

function notFoundRun(runId: string, state?: string) {
  return notFound(state === undefined ? `workflow run ${runId}` : `workflow run ${runId} (it ended: ${state})`);
}

/**
 * The workflow DLQ actions (contract E13–E15), the REST trigger (E17). Registered with the messaging routes.
 */
export function workflowDlqRoutes(app: FastifyInstance, services: Services): void {
  const dlqFilterOf = (query: Query): DlqFilter => {
    const filter: DlqFilter = {};
    const ids = multi(query, "dlqIds");
    if (ids) filter.dlqIds = ids;
    const runIds = multi(query, "workflowRunId");
    if (runIds) filter.workflowRunId = runIds;
    const url = single(query, "workflowUrl");
    if (url !== undefined && url !== "") filter.url = [url];
    const from = msParam(query, "fromDate");
    if (from !== undefined) filter.fromDate = from;
    const to = msParam(query, "toDate");
    if (to !== undefined) filter.toDate = to;
    return filter;
  };
  for (const mode of ["resume", "restart"] as const) {
    app.post<{ Querystring: Query }>(`/v2/workflows/dlq/${mode}`, async (request): Promise<RunRefs> => {
      const overrides = runOverrides(services, request.account, { headers: request.headers, query: new Map() }, request.dialect);
      const count = intParam(request.query, "count", 1, 100) ?? 100;
      return rerunManyFromDlq(services, request.account, dlqFilterOf(request.query), count, mode, overrides);
    });
    app.post<{ Params: { dlqId: string } }>(`/v2/workflows/dlq/${mode}/:dlqId`, async (request): Promise<RunRefs> => {
      const overrides = runOverrides(services, request.account, { headers: request.headers, query: new Map() }, request.dialect);
      const run = await rerunFromDlq(services, request.account, request.params.dlqId, mode, overrides);
      return { workflowRuns: [run] };
    });
  }
  app.post<{ Params: { dlqId: string } }>("/v2/workflows/dlq/callback/:dlqId", async (request): Promise<RunRef> =>
    retryFailureCallback(services, request.account, request.params.dlqId),
  );
  app.delete<{ Querystring: Query }>("/v2/workflows/dlq", async (request): Promise<WorkflowDlqDeleted> => {
    const filter = { ...dlqFilterOf(request.query), workflowOnly: true };
    const count = intParam(request.query, "count", 1, 10_000);
    return services.store.dlqDelete({ accountId: request.account.id, filter, ...(count !== undefined ? { count } : {}) });
  });
  type OneEntry = { Params: { dlqId: string } };
  app.delete<OneEntry>("/v2/workflows/dlq/:dlqId", async (request): Promise<WorkflowDlqDeleted> => {
    const filter = { dlqIds: [request.params.dlqId], workflowOnly: true };
    const { deleted } = await services.store.dlqDelete({ accountId: request.account.id, filter });
    if (deleted === 0) throw notFound(`workflow dlq message ${request.params.dlqId}`);
    return { deleted };
  });

  app.post("/v2/trigger/*", async (request): Promise<RunRef> => {
    const { destination, config } = splitDestination(restAfter(request, /^\/v2\/trigger\//i), request.dialect);
    const d = request.dialect;
    const runId = `wfr_${ulid(services.clock.now())}`;
    const headers = {
      ...request.headers,
      [d.key("Workflow-RunId")]: runId,
      [d.key("Workflow-Init")]: "true",
      [d.key("Workflow-Url")]: destination,
    };
    await publish(services, {
      account: request.account,
      destination,
      source: { headers, query: config },
      body: rawBody(request),
      callerIp: request.ip,
      dialect: d,
      restTrigger: true,
    });
    const run = await services.store.workflowRunGet({ accountId: request.account.id, runId });
    return { workflowRunId: runId, workflowCreatedAt: run?.createdAt ?? services.clock.now() };
  });
}

/**
 * Webhooks (contract §6.6, E16): third parties call the URL `createWebhook` made, without a token; the call becomes
 * the event of the run's `waitForWebhook`, kept when it comes first. The user id is the account's id (the token's
 * `UserID`).
 */
export function workflowHookRoutes(app: FastifyInstance, services: Services): void {
  for (const method of HOOK_METHODS) {
    app.route<{ Params: { userId: string; runId: string; eventId: string } }>({
      method,
      url: "/v2/workflows/hooks/:userId/:runId/:eventId",
      handler: async (request): Promise<HookReceived> => {
      const account = await hookAccount(services, decodeURIComponent(request.params.userId));
      if (!account) throw notFound(`webhook user ${request.params.userId}`);
      const runId = runIdParam(request.params.runId);
      const eventId = eventIdParam(request.params.eventId);
      const url = request.raw.url ?? "";
      const headers: Record<string, string[]> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (value !== undefined) headers[canonicalHeaderName(name)] = Array.isArray(value) ? value : [value];
      }
      const data = webhookEventData({
        proto: request.protocol,
        method: request.method,
        headers,
        body: rawBody(request),
        host: String(request.headers.host ?? ""),
        url,
      });
      const notified = await notify(services, account, eventId, data, runId);
      return { notified: notified.length };
      },
    });
  }
}

/** The methods a webhook URL answers (a third party's call may use any of them). */
export const HOOK_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/**
 * The account of a webhook's user id: the account with that id (Ferry's tokens carry the account id as `UserID`), or
 * the default account when its configured token says that user id (`ferry dev`'s well-known token says `defaultUser`).
 */
async function hookAccount(services: Services, userId: string) {
  const byId = await services.store.accountGet({ id: userId });
  if (byId) return byId;
  const first = await services.store.accountFirst();
  return first && userIdOfToken(first.token) === userId ? first : undefined;
}
