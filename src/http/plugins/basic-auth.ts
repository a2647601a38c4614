import type { FastifyInstance } from "fastify";
import { authenticateCustomer } from "../../services/customers.js";
import type { Services } from "../../services/context.js";
import type { Customer } from "../../domain/records.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The management customer of the Basic credentials; set on every management route. */
    customer: Customer;
  }
}

/**
 * HTTP Basic auth (`email:api_key`) for every route registered in this scope: 401 with `WWW-Authenticate` when the
 * credentials are missing or wrong. Keys are checked against their stored scrypt hash in constant time.
 */
export function requireCustomer(app: FastifyInstance, services: Services): void {
  app.decorateRequest("customer", undefined as unknown as Customer);
  app.addHook("onRequest", async (request) => {
    request.customer = await authenticateCustomer(services.store, request.headers.authorization);
  });
}
