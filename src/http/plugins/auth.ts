import type { FastifyInstance, FastifyRequest } from "fastify";
import { authenticate } from "../../services/accounts.js";
import type { Services } from "../../services/context.js";
import type { Account } from "../../store/store.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The messaging account of the Bearer (or `svc_token`) token; set on every messaging route. */
    account: Account;
  }
}

function tokenOf(request: FastifyRequest, tokenQuery: string): string | undefined {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (match) return match[1]!.trim();
  }
  const query = request.query as Record<string, string | string[] | undefined>;
  const fromQuery = query[tokenQuery];
  return Array.isArray(fromQuery) ? fromQuery[0] : fromQuery;
}

/** Bearer-token auth for every route registered in this scope. The token is looked up on every request, so a
 * rotated token is refused at once on every node. */
export function requireMessagingToken(app: FastifyInstance, services: Services): void {
  app.decorateRequest("account", undefined as unknown as Account);
  app.addHook("onRequest", async (request) => {
    request.account = await authenticate(services.store, tokenOf(request, services.dialect.tokenQuery));
  });
}
