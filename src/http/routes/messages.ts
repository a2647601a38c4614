import type { FastifyInstance } from "fastify";
import { invalidField } from "../../errors.js";
import type { Services } from "../../services/context.js";
import { cancelMessage, cancelMessages, getMessage } from "../../services/messages.js";
import { jsonObjectBody } from "../body.js";
import {
  intParam,
  MESSAGE_FILTER_KEYS,
  messageFilterFromBody,
  messageFilterFromQuery,
  type Query,
  rejectUnknownKeys,
} from "../query.js";
import { messageRecord } from "../views/message-view.js";
import { readable } from "../plugins/auth.js";

const BULK_CANCEL_KEYS = new Set<string>([...MESSAGE_FILTER_KEYS, "count", "cursor"]);

export function messageRoutes(app: FastifyInstance, services: Services): void {
  app.get<{ Params: { id: string } }>("/v2/messages/:id", readable, async (request) =>
    messageRecord(await getMessage(services, request.account, request.params.id)),
  );

  app.delete<{ Params: { id: string } }>("/v2/messages/:id", async (request) => ({
    cancelled: await cancelMessage(services, request.account, request.params.id),
  }));

  // Bulk cancel: query filters (JS SDK) or a JSON body (Python and Go SDKs); neither means everything.
  app.delete("/v2/messages", async (request) => {
    const query = request.query as Query;
    rejectUnknownKeys(query, BULK_CANCEL_KEYS, request.dialect.tokenQuery);
    const body = jsonObjectBody(request);
    if (body) {
      const ids = body.messageIds;
      if (ids !== undefined && ids !== null && !(Array.isArray(ids) && ids.every((id) => typeof id === "string"))) {
        throw invalidField("messageIds", "must be an array of message ids");
      }
    }
    const filter = body ? messageFilterFromBody(body) : messageFilterFromQuery(query);
    const count =
      intParam(query, "count", 1, 500) ??
      (body?.count !== undefined ? intParam({ count: String(body.count) }, "count", 1, 500) : undefined);
    return { cancelled: await cancelMessages(services, request.account, filter, count) };
  });
}
