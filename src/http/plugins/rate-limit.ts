import type { FastifyInstance } from "fastify";
import type { Services } from "../../services/context.js";
import { BurstLimiter } from "../../services/limits.js";

/**
 * max_requests_per_second for every messaging route of this scope (one limiter per app, i.e. per node). Register
 * after requireMessagingToken: it counts per authenticated account.
 */
export function limitMessagingBursts(app: FastifyInstance, services: Services): void {
  const limiter = new BurstLimiter(services.plans);
  app.addHook("onRequest", async (request) => {
    limiter.take(request.account, services.clock.now());
  });
}
