import type { Dialect } from "../../domain/dialect.js";
import { MESSAGE_LIST_STATES } from "../../domain/message-list-state.js";
import { DLQ_FILTER_KEYS, MESSAGE_FILTER_KEYS } from "../query.js";
import type { JsonSchema, RouteDoc } from "./route-doc.js";
import { Type } from "../schemas/common.js";
import { FlowKey, GlobalParallelism } from "../schemas/flow-control.js";
import { Queue, Topic } from "../schemas/groups-queues.js";
import { SigningKeys } from "../schemas/keys.js";
import { MessageListPage } from "../schemas/message-list.js";
import { BatchAnswer, PublishAnswer } from "../schemas/publish.js";
import { Schedule, ScheduleCreated } from "../schemas/schedules.js";
import { Cancelled, MessageRecord } from "../schemas/messages.js";
import { EventPage, LogPage } from "../schemas/logs.js";
import { DlqDeleted, DlqEntry, DlqPage, DlqRetried, DlqRetriedMany } from "../schemas/dlq.js";

/** Request bodies, described for the documentation only (route-doc.ts says why); answers are wire shapes (src/http/schemas/). */
const obj = (properties: Record<string, JsonSchema>, description?: string): JsonSchema => ({
  type: "object",
  properties,
  ...(description ? { description } : {}),
});
const str = (description?: string): JsonSchema => ({ type: "string", ...(description ? { description } : {}) });
const arr = (items: JsonSchema): JsonSchema => ({ type: "array", items });

const pageQuery = {
  cursor: "Cursor of the next page (from the previous answer)",
  count: "Page size",
  order: "latestFirst or earliestFirst",
};
const messageFilters = Object.fromEntries(
  MESSAGE_FILTER_KEYS.map((k) => [k, `Filter: ${k} (repeat the key or separate values with commas)`]),
);
const dlqFilters = Object.fromEntries(DLQ_FILTER_KEYS.map((k) => [k, `Filter: ${k}`]));

/** The publish configuration headers in the running dialect's names (docs: README, docs/messaging.md "Publish"). */
function configHeaders(d: Dialect): Record<string, string> {
  const h = (name: string, description: string): [string, string] => [d.key(name), description];
  return Object.fromEntries([
    h("delay", "Delay before the first attempt, e.g. 10s, 5m"),
    h("not-before", "Unix seconds before which the message is not delivered"),
    h("retries", "Retries after the first attempt"),
    h("retry-delay", "Retry delay expression, e.g. 1000 * pow(2, retried)"),
    h("timeout", "Attempt timeout, e.g. 30s"),
    h("method", "HTTP method of the delivery"),
    h("callback", "URL called with the destination's answer"),
    h("failure-callback", "URL called when the message fails"),
    h("deduplication-id", "Messages with the same id within the deduplication window are published once"),
    h("content-based-deduplication", "true: deduplicate by destination, body and headers"),
    h("label", "Label shown in logs and usable as a filter"),
    h("flow-control-key", "Flow-control key"),
    h("flow-control-value", "parallelism=N, rate=N, period=1m"),
    h("redact-fields", "Fields redacted from logs: body, header, header[Name]"),
    h("header-forward", "true: forward every request header"),
    h("forward-*", "Forwarded to the destination without the prefix (any name)"),
  ]);
}

const token = (p: Omit<RouteDoc, "auth">): RouteDoc => ({ ...p, auth: "token" });

/** Messaging API routes, keyed `METHOD url` as registered. */
export function messagingDocs(d: Dialect): Record<string, RouteDoc> {
  const headers = configHeaders(d);
  return {
    "POST /v2/publish/*": token({
      tag: "Messages",
      summary: "Publish a message to a URL or a URL group",
      params: { "*": "The destination: a URL (http:// or https://) or a URL group name" },
      headers,
      body: "raw",
      responses: { 200: ["Published", PublishAnswer], 202: ["Every message was a duplicate", PublishAnswer] },
    }),
    "POST /v2/enqueue/*": token({
      tag: "Queues",
      summary: "Enqueue a message into a FIFO queue (created with parallelism 1 when absent)",
      params: { "*": "<queue>/<destination>" },
      headers,
      body: "raw",
      responses: { 200: ["Enqueued", PublishAnswer], 202: ["Every message was a duplicate", PublishAnswer] },
    }),
    "POST /v2/batch": token({
      tag: "Messages",
      summary: "Publish several messages in one request",
      body: arr(obj({ destination: str(), headers: { type: "object" }, body: str(), queue: str() })),
      responses: { 200: ["One answer per item, in request order", BatchAnswer] },
    }),
    "GET /v2/messages": token({
      tag: "Messages",
      summary: "List messages, one entry per message with its current state, newest first (a Ferry extension)",
      description:
        "Paged by message with `cursor`; the entries never carry bodies. Open to the read-only token. " +
        "docs/messaging.md \"Listing messages\".",
      query: {
        ...messageFilters,
        messageId: "Message id (repeat or comma-separate)",
        state: `Current state, any of: ${MESSAGE_LIST_STATES.join(", ")}`,
        cursor: "Cursor of the next page (from the previous answer)",
        count: "Page size, 1..1000 (default 100)",
        order: "latestFirst (default) or earliestFirst",
      },
      responses: { 200: ["A page of messages", MessageListPage] },
    }),
    "GET /v2/messages/:id": token({
      tag: "Messages",
      summary: "A message that is not finished yet",
      params: { id: "Message id" },
      responses: { 200: ["The message", MessageRecord] },
    }),
    "DELETE /v2/messages/:id": token({
      tag: "Messages",
      summary: "Cancel a message",
      params: { id: "Message id" },
      responses: { 200: ["Cancelled", Cancelled] },
    }),
    "DELETE /v2/messages": token({
      tag: "Messages",
      summary: "Cancel messages by filter (query or JSON body); nothing cancels everything",
      query: { ...messageFilters, count: "At most this many (1..500)", cursor: "Cursor" },
      body: obj({ messageIds: arr(str()), count: { type: "integer" } }),
      responses: { 200: ["Cancelled", Cancelled] },
    }),
    "GET /v2/events": token({
      tag: "Logs",
      summary: "Log entries (formerly events)",
      query: { ...messageFilters, messageId: "Message id", state: "State filter", api: "Ignored", trimBody: "Trim bodies to this many bytes", ...pageQuery },
      responses: { 200: ["A page of entries", EventPage] },
    }),
    "GET /v2/logs": token({
      tag: "Logs",
      summary: "Log entries",
      query: { ...messageFilters, messageId: "Message id", state: "State filter", api: "Ignored", trimBody: "Trim bodies to this many bytes", ...pageQuery },
      responses: { 200: ["A page of entries", LogPage] },
    }),
    "GET /v2/keys": token({ tag: "Signing keys", summary: "The signing keys", responses: { 200: ["Keys", SigningKeys] } }),
    "POST /v2/keys/rotate": token({
      tag: "Signing keys",
      summary: "Rotate: next becomes current, a new next is made",
      responses: { 200: ["Keys", SigningKeys] },
    }),
    "GET /v2/dlq": token({
      tag: "Dead-letter queue",
      summary: "List dead-letter entries",
      query: { ...dlqFilters, ...pageQuery },
      responses: { 200: ["A page", DlqPage] },
    }),
    "GET /v2/dlq/:dlqId": token({
      tag: "Dead-letter queue",
      summary: "One dead-letter entry",
      params: { dlqId: "Entry id" },
      responses: { 200: ["The entry", DlqEntry] },
    }),
    "DELETE /v2/dlq/:dlqId": token({
      tag: "Dead-letter queue",
      summary: "Delete one entry",
      params: { dlqId: "Entry id" },
      responses: { 200: ["Deleted"] },
    }),
    "DELETE /v2/dlq": token({
      tag: "Dead-letter queue",
      summary: "Delete entries by ids or filter; nothing deletes everything",
      query: { ...dlqFilters, cursor: "Cursor", count: "At most this many" },
      body: obj({ dlqIds: arr(str()) }),
      responses: { 200: ["Deleted", DlqDeleted] },
    }),
    "POST /v2/dlq/retry/:dlqId": token({
      tag: "Dead-letter queue",
      summary: "Publish an entry again (configuration headers override the original's)",
      params: { dlqId: "Entry id" },
      headers,
      responses: { 201: ["Published again", DlqRetried] },
    }),
    "POST /v2/dlq/retry": token({
      tag: "Dead-letter queue",
      summary: "Publish entries again by ids or filter",
      query: { ...dlqFilters, cursor: "Cursor", count: "At most this many" },
      headers,
      body: obj({ dlqIds: arr(str()) }),
      responses: { 201: ["Published again", DlqRetriedMany] },
    }),
    "POST /v2/schedules/*": token({
      tag: "Schedules",
      summary: "Create or update a schedule for a destination",
      params: { "*": "The destination: a URL or a URL group name" },
      headers: { [d.key("cron")]: "Cron expression (5 fields, optional CRON_TZ=)", [d.key("schedule-id")]: "Id to create or update", ...headers },
      body: "raw",
      responses: { 200: ["Created or updated", ScheduleCreated] },
    }),
    "POST /v2/schedules": token({
      tag: "Schedules",
      summary: "Without a destination: answers 400 naming it",
      responses: { 200: ["Created or updated (never here: without a destination the answer is 400)", ScheduleCreated] },
    }),
    "GET /v2/schedules": token({ tag: "Schedules", summary: "List schedules", responses: { 200: ["Schedules", Type.Array(Schedule)] } }),
    "GET /v2/schedules/:id": token({
      tag: "Schedules",
      summary: "One schedule",
      params: { id: "Schedule id" },
      responses: { 200: ["The schedule", Schedule] },
    }),
    "DELETE /v2/schedules/:id": token({
      tag: "Schedules",
      summary: "Delete a schedule",
      params: { id: "Schedule id" },
      responses: { 200: ["Deleted"] },
    }),
    "POST /v2/schedules/:id/pause": token({ tag: "Schedules", summary: "Pause", params: { id: "Schedule id" }, responses: { 200: ["Paused"] } }),
    "PATCH /v2/schedules/:id/pause": token({ tag: "Schedules", summary: "Pause", params: { id: "Schedule id" }, responses: { 200: ["Paused"] } }),
    "POST /v2/schedules/:id/resume": token({ tag: "Schedules", summary: "Resume", params: { id: "Schedule id" }, responses: { 200: ["Resumed"] } }),
    "PATCH /v2/schedules/:id/resume": token({ tag: "Schedules", summary: "Resume", params: { id: "Schedule id" }, responses: { 200: ["Resumed"] } }),
    "GET /v2/topics": token({ tag: "URL groups", summary: "List URL groups", responses: { 200: ["URL groups", Type.Array(Topic)] } }),
    "GET /v2/topics/:name": token({ tag: "URL groups", summary: "One URL group", params: { name: "Group name" }, responses: { 200: ["The group", Topic] } }),
    "DELETE /v2/topics/:name": token({ tag: "URL groups", summary: "Delete a URL group", params: { name: "Group name" }, responses: { 200: ["Deleted"] } }),
    "PATCH /v2/topics/:name": token({
      tag: "URL groups",
      summary: "Set the group's default headers",
      params: { name: "Group name" },
      body: obj({ headers: { type: "object" } }),
      responses: { 200: ["Updated"] },
    }),
    "POST /v2/topics/:name/endpoints": token({
      tag: "URL groups",
      summary: "Add endpoints (creates the group)",
      params: { name: "Group name" },
      body: obj({ endpoints: arr(obj({ name: str(), url: str() })) }),
      responses: { 200: ["Added"] },
    }),
    "DELETE /v2/topics/:name/endpoints": token({
      tag: "URL groups",
      summary: "Remove endpoints by name or URL",
      params: { name: "Group name" },
      body: obj({ endpoints: arr(obj({ name: str(), url: str() })) }),
      responses: { 200: ["Removed"] },
    }),
    "POST /v2/queues": token({
      tag: "Queues",
      summary: "Create or update a queue",
      body: obj({ queueName: str(), parallelism: { type: "integer" }, paused: { type: "boolean" } }),
      responses: { 200: ["Created or updated"] },
    }),
    "GET /v2/queues": token({ tag: "Queues", summary: "List queues", responses: { 200: ["Queues", Type.Array(Queue)] } }),
    "GET /v2/queues/:name": token({ tag: "Queues", summary: "One queue", params: { name: "Queue name" }, responses: { 200: ["The queue", Queue] } }),
    "DELETE /v2/queues/:name": token({ tag: "Queues", summary: "Delete a queue", params: { name: "Queue name" }, responses: { 200: ["Deleted"] } }),
    "POST /v2/queues/:name/pause": token({ tag: "Queues", summary: "Pause", params: { name: "Queue name" }, responses: { 200: ["Paused"] } }),
    "POST /v2/queues/:name/resume": token({ tag: "Queues", summary: "Resume", params: { name: "Queue name" }, responses: { 200: ["Resumed"] } }),
    "GET /v2/flowControl": token({
      tag: "Flow control",
      summary: "Flow-control keys",
      query: { search: "Key prefix" },
      responses: { 200: ["Keys", Type.Array(FlowKey)] },
    }),
    "GET /v2/flowControl/:key": token({
      tag: "Flow control",
      summary: "One flow-control key",
      params: { key: "Flow-control key" },
      responses: { 200: ["The key", FlowKey] },
    }),
    ...Object.fromEntries(
      (["reset", "resetRate", "pause", "resume", "unpin"] as const).map((action) => [
        `POST /v2/flowControl/:key/${action}`,
        token({ tag: "Flow control", summary: `${action} the key`, params: { key: "Flow-control key" }, responses: { 200: ["Done"] } }),
      ]),
    ),
    "POST /v2/flowControl/:key/pin": token({
      tag: "Flow control",
      summary: "Pin the key's configuration against incoming messages",
      params: { key: "Flow-control key" },
      query: { parallelism: "Parallelism", rate: "Rate", period: "Rate period, e.g. 1m" },
      responses: { 200: ["Pinned"] },
    }),
    "GET /v2/globalParallelism": token({
      tag: "Flow control",
      summary: "The account's max_global_parallelism and its use",
      responses: { 200: ["Use (zero numbers left out)", GlobalParallelism] },
    }),
  };
}
