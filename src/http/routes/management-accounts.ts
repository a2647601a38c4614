import type { FastifyInstance } from "fastify";
import type { Services } from "../../services/context.js";
import {
  defaultAccountOf,
  listAccounts,
  ownedAccount,
  rotateToken,
  setBudget,
  setPlan,
  setProdPack,
} from "../../services/management.js";
import { usageStats } from "../../services/stats.js";
import type { Dialect } from "../../domain/dialect.js";
import type { Account } from "../../domain/records.js";
import { jsonObjectBody } from "../body.js";
import { parseBudgetBody, parsePlanBody } from "../bodies/management-accounts.js";
import { sendOk } from "../replies.js";
import { periodParam, type Query } from "../query.js";
import { accountRecord } from "../views/account-view.js";
import type { ManagementAccount, UsageStats } from "../schemas/management.js";

type Id = { Params: { id: string } };

/**
 * Messaging accounts on the management API (docs/management.md "Messaging accounts") under `/v2/msgsvc/` and
 * `/v2/qstash/` alike. Every route acts on the caller's own accounts only.
 */
export function managementAccountRoutes(app: FastifyInstance, services: Services): void {
  for (const dialect of services.dialects.all) routesUnder(app, services, dialect);
}

/**
 * The routes under one dialect's segment: both are served at once, and each answers in the names of its path (the
 * path decides the request's dialect, docs/messaging.md "Dialects").
 */
function routesUnder(app: FastifyInstance, services: Services, dialect: Dialect): void {
  const base = `/v2/${dialect.managementSegment}`;
  const view = (account: Account): ManagementAccount => accountRecord(account, dialect, services.plans);

  app.get(`${base}/user`, async (request) => view(await defaultAccountOf(services, request.customer)));
  app.get(`${base}/users`, async (request) => (await listAccounts(services, request.customer)).map(view));
  app.get<Id>(`${base}/user/:id`, async (request) =>
    view(await ownedAccount(services, request.customer, request.params.id)),
  );

  app.post<Id>(`${base}/rotate-token/:id`, async (request) =>
    view(await rotateToken(services, await ownedAccount(services, request.customer, request.params.id))),
  );
  // Legacy form without an id: the caller's first account.
  app.post(`${base}/user/rotatetoken`, async (request) =>
    view(await rotateToken(services, await defaultAccountOf(services, request.customer))),
  );

  app.post<Id>(`${base}/set-plan/:id`, async (request, reply) => {
    const account = await ownedAccount(services, request.customer, request.params.id);
    const body = jsonObjectBody(request) ?? {};
    await setPlan(services, account, parsePlanBody(body, dialect));
    return sendOk(reply);
  });

  app.patch<Id>(`${base}/update-budget/:id`, async (request, reply) => {
    const account = await ownedAccount(services, request.customer, request.params.id);
    const body = jsonObjectBody(request) ?? {};
    await setBudget(services, account, parseBudgetBody(body));
    return sendOk(reply);
  });

  for (const [action, enabled] of [
    ["enable-prodpack", true],
    ["disable-prodpack", false],
  ] as const) {
    app.post<Id>(`${base}/${action}/:id`, async (request, reply) => {
      await setProdPack(services, await ownedAccount(services, request.customer, request.params.id), enabled);
      return sendOk(reply);
    });
  }

  /** `period` ∈ 1h, 3h, 12h, 1d, 3d, 7d, 30d; default 1h. */
  const stats = async (account: Account, query: Query): Promise<UsageStats> => {
    const period = periodParam(query);
    return usageStats(services, account, period);
  };
  app.get<Id>(`${base}/stats/:id`, async (request) =>
    stats(await ownedAccount(services, request.customer, request.params.id), request.query as Query),
  );
  app.get(`${base}/stats`, async (request) =>
    stats(await defaultAccountOf(services, request.customer), request.query as Query),
  );
}
