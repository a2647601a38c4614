import type { FastifyInstance } from "fastify";
import { newSigningKey } from "../../domain/ids.js";
import type { Services } from "../../services/context.js";

/** Signing keys (reference §1.10): rotation makes next the current and creates a fresh next. */
export function keyRoutes(app: FastifyInstance, services: Services): void {
  app.get("/v2/keys", async (request) => ({
    current: request.account.currentSigningKey,
    next: request.account.nextSigningKey,
  }));
  app.post("/v2/keys/rotate", async (request) => {
    const account = await services.store.accountRotateKeys({ id: request.account.id, next: newSigningKey() });
    return { current: account.currentSigningKey, next: account.nextSigningKey };
  });
}
