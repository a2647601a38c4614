import type { Dialect } from "../../domain/dialect.js";
import { DLQ_FILTER_KEYS } from "../query.js";
import { MessageActions, Replayed, RetriedFromDlq, RetriedNow } from "../schemas/message-actions.js";
import type { RouteDoc } from "./route-doc.js";
import { DlqCount } from "../schemas/dlq.js";

const token = (p: Omit<RouteDoc, "auth">): RouteDoc => ({ ...p, auth: "token" });

/** Retry and replay of one message, and the DLQ's count (docs/messaging.md "Retry and replay", docs/dlq.md). */
export function messageActionDocs(d: Dialect): Record<string, RouteDoc> {
  const headers = { [d.key("*")]: "Configuration headers override the original's, as for a DLQ retry" };
  return {
    "GET /v2/messages/:id/actions": token({
      tag: "Messages",
      summary: "What retry and replay would do for a message, and the replays linked to it (read-only token too)",
      params: { id: "Message id" },
      responses: {
        200: ["The message's actions: what each would do, or why not (the words the POST refuses with)", MessageActions],
      },
    }),
    "POST /v2/messages/:id/retry": token({
      tag: "Messages",
      summary:
        "Retry a message: a failed one's DLQ entry is retried (201, a new message); one waiting out its retry backoff is attempted now (200). 409 in any other state, saying why",
      params: { id: "Message id" },
      headers,
      responses: {
        200: ["Its next attempt is due now", RetriedNow],
        201: ["Its DLQ entry was retried", RetriedFromDlq],
      },
    }),
    "POST /v2/messages/:id/replay": token({
      tag: "Messages",
      summary:
        "Publish a new message with the same request (destination, method, headers, body, options), due now and linked to the first. 410 when its request is no longer kept",
      params: { id: "Message id" },
      headers,
      responses: { 201: ["Replayed", Replayed] },
    }),
    "GET /v2/dlq/count": token({
      tag: "Dead-letter queue",
      summary: "How many entries match the filters",
      query: Object.fromEntries(DLQ_FILTER_KEYS.map((k) => [k, `Filter: ${k}`])),
      responses: { 200: ["The count", DlqCount] },
    }),
  };
}
