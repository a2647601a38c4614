import type { FastifyInstance } from "fastify";
import type { Services } from "../../services/context.js";
import { rotateSigningKeys, signingKeysOf } from "../../services/signing-keys.js";

/** Signing keys (docs/messaging.md "Signing keys"): rotation makes next the current and creates a fresh next. */
export function keyRoutes(app: FastifyInstance, services: Services): void {
  app.get("/v2/keys", async (request) => signingKeysOf(request.account));
  app.post("/v2/keys/rotate", async (request) => rotateSigningKeys(services, request.account));
}
