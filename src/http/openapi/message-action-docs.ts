import type { Dialect } from "../../domain/dialect.js";
import { DLQ_FILTER_KEYS } from "../query.js";
import type { JsonSchema, RouteDoc } from "./route-doc.js";
import { DlqCount } from "../schemas/dlq.js";

const obj = (properties: Record<string, JsonSchema>, description?: string): JsonSchema => ({
  type: "object",
  properties,
  ...(description ? { description } : {}),
});
const str = (description?: string): JsonSchema => ({ type: "string", ...(description ? { description } : {}) });
const int = (description?: string): JsonSchema => ({ type: "integer", ...(description ? { description } : {}) });
const token = (p: Omit<RouteDoc, "auth">): RouteDoc => ({ ...p, auth: "token" });

const plan = obj(
  { allowed: { type: "boolean" }, kind: str("dlq or deliverNow (retry)"), dlqId: str(), dueAt: int(), reason: str() },
  "What the action would do; when not allowed, why (the words the POST refuses with)",
);

/** Retry and replay of one message, and the DLQ's count (docs/messaging.md "Retry and replay", docs/dlq.md). */
export function messageActionDocs(d: Dialect): Record<string, RouteDoc> {
  const headers = { [d.key("*")]: "Configuration headers override the original's, as for a DLQ retry" };
  return {
    "GET /v2/messages/:id/actions": token({
      tag: "Messages",
      summary: "What retry and replay would do for a message, and the replays linked to it (read-only token too)",
      params: { id: "Message id" },
      responses: {
        200: [
          "The message's actions",
          obj({
            messageId: str(),
            state: str("The row's state while it is kept (absent once it left)"),
            retry: plan,
            replay: plan,
            replayOf: str("The message this one replays"),
            replays: { type: "array", items: obj({ messageId: str(), createdAt: int() }) },
          }),
        ],
      },
    }),
    "POST /v2/messages/:id/retry": token({
      tag: "Messages",
      summary:
        "Retry a message: a failed one's DLQ entry is retried (201, a new message); one waiting out its retry backoff is attempted now (200). 409 in any other state, saying why",
      params: { id: "Message id" },
      headers,
      responses: {
        200: ["Its next attempt is due now", obj({ messageId: str(), action: str("deliverNow") })],
        201: [
          "Its DLQ entry was retried",
          obj({ messageId: str("The new message"), action: str("dlqRetry"), dlqId: str(), deduplicated: { type: "boolean" } }),
        ],
      },
    }),
    "POST /v2/messages/:id/replay": token({
      tag: "Messages",
      summary:
        "Publish a new message with the same request (destination, method, headers, body, options), due now and linked to the first. 410 when its request is no longer kept",
      params: { id: "Message id" },
      headers,
      responses: { 201: ["Replayed", obj({ messageId: str("The new message"), replayOf: str() })] },
    }),
    "GET /v2/dlq/count": token({
      tag: "Dead-letter queue",
      summary: "How many entries match the filters",
      query: Object.fromEntries(DLQ_FILTER_KEYS.map((k) => [k, `Filter: ${k}`])),
      responses: { 200: ["The count", DlqCount] },
    }),
  };
}
