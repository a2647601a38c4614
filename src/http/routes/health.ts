import type { FastifyInstance } from "fastify";
import type { Services } from "../../services/context.js";
import { accountHealth, queueThroughput } from "../../services/health.js";
import { readable } from "../plugins/auth.js";
import { intParam, periodParam, type Query, rejectUnknownKeys } from "../query.js";
import { accountHealthView, queueThroughputView } from "../views/account-overview-view.js";

/**
 * The console's health read-outs (docs/console.md "Health"), Ferry extensions of the messaging API for the token's
 * own account. Reads, open to the read-only token.
 */
export function healthRoutes(app: FastifyInstance, services: Services): void {
  app.get("/v2/account/health", readable, async (request) => {
    const query = request.query as Query;
    rejectUnknownKeys(query, new Set(["period"]), request.dialect.tokenQuery);
    const period = periodParam(query);
    return accountHealthView(await accountHealth(services, request.account, period));
  });

  app.get("/v2/account/queue-throughput", readable, async (request) => {
    const query = request.query as Query;
    rejectUnknownKeys(query, new Set(["minutes"]), request.dialect.tokenQuery);
    return queueThroughputView(await queueThroughput(services, request.account, intParam(query, "minutes", 1, 60) ?? 5));
  });
}
