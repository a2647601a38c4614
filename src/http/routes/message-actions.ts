import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Services } from "../../services/context.js";
import { messageActions, replayMessage, retryMessage } from "../../services/message-actions.js";
import type { RetryOverrides } from "../../services/republish.js";
import { configQuery } from "../destination.js";
import { readable } from "../plugins/auth.js";
import { messageActionsView, replayed, retriedFromDlq, retriedNow } from "../views/message-actions-view.js";
import { type Query, rejectUnknownKeys } from "../query.js";

/** No query keys but the token's and the dialect's configuration (`svc-*`), which override the original's. */
function overrides(request: FastifyRequest): RetryOverrides {
  const query = request.query as Query;
  const own = Object.fromEntries(
    Object.entries(query).filter(([key]) => !key.toLowerCase().startsWith(request.dialect.prefixLower)),
  ) as Query;
  rejectUnknownKeys(own, new Set(), request.dialect.tokenQuery);
  return {
    source: { headers: request.headers, query: configQuery(query as Record<string, unknown>, request.dialect) },
    dialect: request.dialect,
  };
}

/** Retry and replay of one message (docs/messaging.md "Retry and replay"; src/services/message-actions.ts). */
export function messageActionRoutes(app: FastifyInstance, services: Services): void {
  app.get<{ Params: { id: string } }>("/v2/messages/:id/actions", readable, async (request) => {
    rejectUnknownKeys(request.query as Query, new Set(), request.dialect.tokenQuery);
    return messageActionsView(await messageActions(services, request.account, request.params.id));
  });

  app.post<{ Params: { id: string } }>("/v2/messages/:id/retry", async (request, reply) => {
    const result = await retryMessage(services, request.account, request.params.id, overrides(request));
    if (result.kind === "deliverNow") return retriedNow(result.messageId);
    reply.status(201);
    return retriedFromDlq(result);
  });

  app.post<{ Params: { id: string } }>("/v2/messages/:id/replay", async (request, reply) => {
    const result = await replayMessage(services, request.account, request.params.id, overrides(request));
    reply.status(201);
    return replayed(result.messageId, request.params.id);
  });
}
