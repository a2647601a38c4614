import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Account } from "../../domain/records.js";
import { sameSecret } from "../../domain/secrets.js";
import type { SearchIndex } from "../../domain/search.js";
import { AppError } from "../../errors.js";
import { authenticate } from "../../services/accounts.js";
import type { Services } from "../../services/context.js";
import type { TokenCheck } from "../../store/store.js";
import { authenticateSearchIndex } from "../../services/search-data.js";
import { bearerToken } from "../bearer.js";

/**
 * The auth of every API that takes a Bearer token, in one place: the messaging API (an account's token or read-only
 * token), the search data plane (an index's token or read-only token) and `/metrics` (FERRY_METRICS_TOKEN). Tokens
 * are read by `bearerToken` and compared in constant time (`sameSecret`, or the store's lookup by token). The
 * management API's Basic auth is src/http/plugins/basic-auth.ts.
 */

declare module "fastify" {
  interface FastifyRequest {
    /** The search index of the endpoint, once its token was checked (search data plane only). */
    searchIndex: SearchIndex;
    /** The messaging account of the Bearer (or `svc_token`/`qstash_token`) token; set on every messaging route. */
    account: Account;
    /**
     * True when the caller used the account's read-only token: only routes marked `readOnlyAllowed` get this far
     * with it, and handlers (or a console) can show what the caller may do without probing.
     */
    readOnly: boolean;
    /**
     * Set on routes marked `tokenCheckedAtCommit` when the store is shared by several nodes: the account may have come
     * from this node's cache, and the route's insert checks the token again at its COMMIT.
     */
    tokenCheck: TokenCheck | undefined;
  }
  interface FastifyContextConfig {
    /**
     * Explicit per-route marker (docs/errors.md `read_only`): the route only reads, so the read-only token may call
     * it. Unmarked messaging routes refuse that token with 403, so a new route is closed to it until someone decides.
     */
    readOnlyAllowed?: boolean;
    /**
     * The route's only write is one `messageInsertMany` that carries `request.tokenCheck` (docs/postgres.md, "Tokens
     * checked at commit"), so its token may be authenticated from the account cache on several nodes too.
     */
    tokenCheckedAtCommit?: boolean;
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
  const fromHeader = bearerToken(request.headers.authorization);
  if (fromHeader !== undefined) return fromHeader;
  const query = request.query as Record<string, string | string[] | undefined>;
  const fromQuery = query[tokenQuery];
  return Array.isArray(fromQuery) ? fromQuery[0] : fromQuery;
}

/**
 * Bearer-token auth for every route registered in this scope. The token is looked up on every request, so a
 * rotated token is refused at once on every node; on the routes marked `tokenCheckedAtCommit` it may come from the
 * account cache, and their insert refuses it at COMMIT instead. The lookup matches either of the account's tokens; the
 * read-only one may only call routes marked `readOnlyAllowed`.
 */
export function requireMessagingToken(app: FastifyInstance, services: Services): void {
  app.decorateRequest("account", undefined as unknown as Account);
  app.decorateRequest("readOnly", false);
  app.decorateRequest("tokenCheck", undefined);
  const sharedStore = !services.store.capabilities.singleNode;
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      app.messagingRoutes.push({ method, url: route.url, readOnlyAllowed: route.config?.readOnlyAllowed === true });
    }
  });
  app.addHook("onRequest", async (request) => {
    const token = tokenOf(request, request.dialect.tokenQuery);
    const checkedAtCommit = sharedStore && request.routeOptions.config.tokenCheckedAtCommit === true;
    const account = await authenticate(services.store, token, checkedAtCommit);
    request.account = account;
    request.readOnly = token !== account.token;
    if (checkedAtCommit && !request.readOnly) request.tokenCheck = { accountId: account.id, token: account.token };
    if (request.readOnly && request.routeOptions.config.readOnlyAllowed !== true) {
      const route = `${request.method} ${request.routeOptions.url ?? ""}`;
      throw new AppError("read_only", `read-only token: ${route} changes state or reveals secrets; use the account's token`);
    }
  });
}

/**
 * The search data plane's auth (docs/search.md, shared docs/search-api.md): route options for the routes that read
 * (either of the index's tokens) and those that write (its token only). Checked before the handler, once the body is
 * read, then `afterAuth` runs (the bandwidth count, which needs the index).
 */
export function searchIndexAuth(
  app: FastifyInstance,
  services: Services,
  afterAuth: (request: FastifyRequest) => Promise<void>,
) {
  app.decorateRequest("searchIndex", undefined as unknown as SearchIndex);
  const check = (writes: boolean) => async (request: FastifyRequest) => {
    const slug = (request.params as { slug: string }).slug;
    const token = bearerToken(request.headers.authorization);
    request.searchIndex = await authenticateSearchIndex(services, { slug, token, writes });
    await afterAuth(request);
  };
  return { reads: { preHandler: check(false) }, writes: { preHandler: check(true) } };
}

/** Every route of the scope requires `Authorization: Bearer <expected>` when `expected` is set (401 otherwise). */
export function requireBearerSecret(scope: FastifyInstance, expected: string | undefined, refusal: string): void {
  if (expected === undefined) return;
  scope.addHook("onRequest", async (request) => {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined || !sameSecret(token, expected)) throw new AppError("unauthorized", refusal);
  });
}
