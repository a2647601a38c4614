import type { FastifyInstance } from "fastify";
import { isStatsPeriod } from "../../domain/stats-period.js";
import { invalidField, quoted } from "../../errors.js";
import type { Services } from "../../services/context.js";
import { accountHealth, queueThroughput } from "../../services/health.js";
import { readable } from "../plugins/auth.js";
import { intParam, type Query, rejectUnknownKeys, single } from "../query.js";
import { accountHealthView, queueThroughputView } from "../views/account-overview-view.js";

/**
 * The console's health read-outs (docs/console.md "Health"), Ferry extensions of the messaging API for the token's
 * own account. Reads, open to the read-only token.
 */
export function healthRoutes(app: FastifyInstance, services: Services): void {
  app.get("/v2/account/health", readable, async (request) => {
    const query = request.query as Query;
    rejectUnknownKeys(query, new Set(["period"]), request.dialect.tokenQuery);
    const period = single(query, "period") ?? "1h";
    if (!isStatsPeriod(period)) {
      throw invalidField("period", `${quoted(period)} must be one of 1h, 3h, 12h, 1d, 3d, 7d, 30d`);
    }
    return accountHealthView(await accountHealth(services, request.account, period));
  });

  app.get("/v2/account/queue-throughput", readable, async (request) => {
    const query = request.query as Query;
    rejectUnknownKeys(query, new Set(["minutes"]), request.dialect.tokenQuery);
    return queueThroughputView(await queueThroughput(services, request.account, intParam(query, "minutes", 1, 60) ?? 5));
  });
}
