import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Services } from "../../services/context.js";
import { expandStates, listLogs } from "../../services/messages.js";
import type { LogFilter } from "../../store/store.js";
import { fitJsonPage, truncateBodies } from "../views/page-budget.js";
import {
  cursorParam,
  intParam,
  MESSAGE_FILTER_KEYS,
  messageFilterFromQuery,
  multi,
  orderParam,
  type Query,
  rejectUnknownKeys,
} from "../query.js";
import { logRecord } from "../views/log-view.js";
import { readable } from "../plugins/auth.js";

const LOG_KEYS = new Set<string>([
  ...MESSAGE_FILTER_KEYS,
  "messageId",
  "state",
  "cursor",
  "count",
  "order",
  "api",
  "trimBody",
]);

/** Logs (formerly events): `/v2/events` answers `events`; `/v2/logs` answers both `logs` and `events`. */
export function logRoutes(app: FastifyInstance, services: Services): void {
  async function page(request: FastifyRequest) {
    const query = request.query as Query;
    rejectUnknownKeys(query, LOG_KEYS, request.dialect.tokenQuery);
    const filter: LogFilter = messageFilterFromQuery(query);
    const ids = filter.messageIds ?? multi(query, "messageId");
    if (ids) filter.messageIds = ids;
    const states = expandStates(multi(query, "state"));
    if (states) filter.state = states;
    const p: Parameters<typeof listLogs>[2] = {
      filter,
      count: intParam(query, "count", 1, 1000) ?? 100,
      order: orderParam(query, "latestFirst"),
    };
    const cursor = cursorParam(query);
    if (cursor !== undefined) p.cursor = cursor;
    const result = await listLogs(services, request.account, p);
    // Bodies are cut and the page bounded in bytes (page-budget.ts); both logs base64 their bodies.
    const fitted = fitJsonPage(
      result.logs,
      (e) => truncateBodies(logRecord(e), [], ["body", "responseBody"]),
      (e) => e.seq,
      result.cursor,
    );
    return { logs: fitted.records, cursor: fitted.cursor };
  }

  app.get("/v2/events", readable, async (request) => {
    const { logs, cursor } = await page(request);
    return cursor === undefined ? { events: logs } : { cursor, events: logs };
  });

  app.get("/v2/logs", readable, async (request) => {
    const { logs, cursor } = await page(request);
    return cursor === undefined ? { logs, events: logs } : { cursor, logs, events: logs };
  });
}
