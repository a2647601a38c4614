import type { FastifyInstance } from "fastify";
import { accountOverview } from "../../services/account-overview.js";
import type { Services } from "../../services/context.js";
import { usageStats } from "../../services/stats.js";
import { readable } from "../plugins/auth.js";
import { periodParam, type Query, rejectUnknownKeys } from "../query.js";
import { wirePlanName } from "../views/account-view.js";
import { accountOverviewView, usageStatsView } from "../views/account-overview-view.js";

/**
 * The token's own account on the messaging API (docs/console.md): what the console shows on its overview without
 * management credentials. Both are reads, open to the read-only token, which `readOnly` then reports so the console
 * disables its write buttons.
 */
export function accountRoutes(app: FastifyInstance, services: Services): void {
  app.get("/v2/account", readable, async (request) => {
    rejectUnknownKeys(request.query as Query, new Set(), request.dialect.tokenQuery);
    return accountOverviewView(
      await accountOverview(services, request.account, {
        readOnly: request.readOnly,
        planName: wirePlanName(request.account.plan, request.dialect),
      }),
    );
  });

  /** The management API's usage statistics (docs/management.md) for the token's account; `period` default 1h. */
  app.get("/v2/account/stats", readable, async (request) => {
    const query = request.query as Query;
    rejectUnknownKeys(query, new Set(["period"]), request.dialect.tokenQuery);
    const period = periodParam(query);
    return usageStatsView(await usageStats(services, request.account, period));
  });
}
