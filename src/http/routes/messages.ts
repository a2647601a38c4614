import type { FastifyInstance } from "fastify";
import { invalidField, quoted } from "../../errors.js";
import type { Services } from "../../services/context.js";
import { cancelMessage, cancelMessages, getMessage, listMessages } from "../../services/messages.js";
import { isMessageListState, MESSAGE_LIST_STATES, type MessageListState } from "../../domain/message-list-state.js";
import type { MessageRowFilter } from "../../store/message-row-store.js";
import { jsonObjectBody } from "../body.js";
import { parseCancelBody } from "../bodies/messages.js";
import {
  intParam,
  MESSAGE_FILTER_KEYS,
  messageFilterFromQuery,
  multi,
  orderParam,
  type Query,
  rejectUnknownKeys,
  single,
} from "../query.js";
import { messageRecord } from "../views/message-view.js";
import { messageListEntry, messageListPage } from "../views/message-list-view.js";
import { readable } from "../plugins/auth.js";

const BULK_CANCEL_KEYS = new Set<string>([...MESSAGE_FILTER_KEYS, "count", "cursor"]);
const LIST_KEYS = new Set<string>([...MESSAGE_FILTER_KEYS, "messageId", "state", "count", "cursor", "order"]);
/** Page size of `GET /v2/messages`: default and maximum (entries carry no body, so a page stays small). */
const LIST_PAGE = 100;
const LIST_MAX = 1000;

/** The filters of `GET /v2/messages` (docs/messaging.md "Listing messages"); a bad one is a 400 naming it. */
function messageListFilter(query: Query): MessageRowFilter {
  const filter: MessageRowFilter = messageFilterFromQuery(query);
  const ids = [...(filter.messageIds ?? []), ...(multi(query, "messageId") ?? [])];
  if (ids.length > 0) filter.messageIds = ids;
  const states = multi(query, "state");
  if (states) {
    filter.listState = [
      ...new Set(
        states.map((raw): MessageListState => {
          const s = raw.toUpperCase() === "CANCELLED" ? "CANCELED" : raw.toUpperCase();
          if (!isMessageListState(s)) throw invalidField("state", `${quoted(raw)} must be one of ${MESSAGE_LIST_STATES.join(", ")}`);
          return s;
        }),
      ),
    ];
  }
  if (filter.fromDate !== undefined && filter.toDate !== undefined && filter.toDate < filter.fromDate) {
    throw invalidField("toDate", `${filter.toDate} is before fromDate ${filter.fromDate}`);
  }
  return filter;
}

export function messageRoutes(app: FastifyInstance, services: Services): void {
  // One entry per message, newest first, paged by message (a Ferry extension: docs/messaging.md "Listing messages").
  app.get("/v2/messages", readable, async (request) => {
    const query = request.query as Query;
    rejectUnknownKeys(query, LIST_KEYS, request.dialect.tokenQuery);
    const p: Parameters<typeof listMessages>[2] = {
      filter: messageListFilter(query),
      count: intParam(query, "count", 1, LIST_MAX) ?? LIST_PAGE,
      order: orderParam(query, "latestFirst"),
    };
    const cursor = single(query, "cursor");
    if (cursor !== undefined && cursor !== "") {
      if (!/^\d{1,15}$/.test(cursor)) throw invalidField("cursor", `${quoted(cursor)} is not a cursor returned by this API`);
      p.cursor = cursor;
    }
    const page = await listMessages(services, request.account, p);
    return messageListPage(
      page.rows.map((r) => messageListEntry(r, page.now)),
      page.cursor,
    );
  });

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
    const fromBody = body ? parseCancelBody(body) : undefined;
    const filter = fromBody ? fromBody.filter : messageFilterFromQuery(query);
    const count = intParam(query, "count", 1, 500) ?? fromBody?.count;
    return { cancelled: await cancelMessages(services, request.account, filter, count) };
  });
}
