import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError } from "../../errors.js";
import { authenticate } from "../../services/accounts.js";
import type { Services } from "../../services/context.js";
import type { Account } from "../../domain/records.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The messaging account of the Bearer (or `svc_token`/`qstash_token`) token; set on every messaging route. */
    account: Account;
    /**
     * True when the caller used the account's read-only token: only routes marked `readOnlyAllowed` get this far
     * with it, and handlers (or a console) can show what the caller may do without probing.
     */
    readOnly: boolean;
  }
  interface FastifyContextConfig {
    /**
     * Explicit per-route marker (docs/errors.md `read_only`): the route only reads, so the read-only token may call
     * it. Unmarked messaging routes refuse that token with 403, so a new route is closed to it until someone decides.
     */
    readOnlyAllowed?: boolean;
  }
  interface FastifyInstance {
    /** Every route of the messaging scope as registered, for the read-only table test (test/e2e). */
    messagingRoutes: MessagingRoute[];
  }
}

export interface MessagingRoute {
  method: string;
  url: string;
  readOnlyAllowed: boolean;
}

/** Route option that opens a messaging route to the read-only token: `app.get(path, readable, handler)`. */
export const readable = { config: { readOnlyAllowed: true } } as const;

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

/**
 * Bearer-token auth for every route registered in this scope. The token is looked up on every request, so a
 * rotated token is refused at once on every node. The lookup matches either of the account's tokens; the
 * read-only one may only call routes marked `readOnlyAllowed`.
 */
export function requireMessagingToken(app: FastifyInstance, services: Services): void {
  app.decorateRequest("account", undefined as unknown as Account);
  app.decorateRequest("readOnly", false);
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      app.messagingRoutes.push({ method, url: route.url, readOnlyAllowed: route.config?.readOnlyAllowed === true });
    }
  });
  app.addHook("onRequest", async (request) => {
    const token = tokenOf(request, request.dialect.tokenQuery);
    const account = await authenticate(services.store, token);
    request.account = account;
    request.readOnly = token !== account.token;
    if (request.readOnly && request.routeOptions.config.readOnlyAllowed !== true) {
      const route = `${request.method} ${request.routeOptions.url ?? ""}`;
      throw new AppError("read_only", `read-only token: ${route} changes state or reveals secrets; use the account's token`);
    }
  });
}
