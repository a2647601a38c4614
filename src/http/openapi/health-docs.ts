import type { JsonSchema, RouteDoc } from "./route-doc.js";

const obj = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: "object", properties });
const arr = (items: JsonSchema): JsonSchema => ({ type: "array", items });
const str = (): JsonSchema => ({ type: "string" });
const int = (): JsonSchema => ({ type: "integer" });
const num = (): JsonSchema => ({ type: "number" });
const nullable = (type: string): JsonSchema => ({ type: [type, "null"] });

const health = obj({
  period: str(),
  from: int(),
  to: int(),
  delivered: int(),
  failed: int(),
  successRate: nullable("number"),
  latency: obj({ p50: nullable("integer"), p99: nullable("integer"), sample: int(), sampleCapped: { type: "boolean" } }),
  destinations: arr(
    obj({
      url: str(),
      failedAttempts: int(),
      failedMessages: int(),
      lastError: obj({ time: int(), messageId: str(), error: str(), status: int(), bodyStart: str() }),
    }),
  ),
  destinationsCapped: { type: "boolean" },
});

const throughput = obj({
  minutes: int(),
  from: int(),
  to: int(),
  queues: arr(obj({ queueName: str(), delivered: int(), perMinute: num() })),
  capped: { type: "boolean" },
});

/** The console's health read-outs and a schedule's run now: Ferry extensions (docs/console.md, docs/schedules.md). */
export const healthDocs: Record<string, RouteDoc> = {
  "GET /v2/account/health": {
    auth: "token",
    tag: "Account",
    summary: "Success rate, publish→delivery latency (p50, p99) and the destinations ranked by failures, over a period",
    description:
      "A Ferry extension (docs/console.md \"Health\"). Delivered and failed are the usage counters' (exact); the " +
      "latency is over the newest 10,000 deliveries of the period, the ranking over its newest 10,000 failed attempts.",
    query: { period: "1h, 3h, 12h, 1d, 3d, 7d or 30d (default 1h)" },
    responses: { 200: ["Health", health] },
  },
  "GET /v2/account/queue-throughput": {
    auth: "token",
    tag: "Account",
    summary: "Messages each queue delivered over the last minutes, and per minute",
    description: "A Ferry extension (docs/console.md \"Queues\").",
    query: { minutes: "The window, 1..60 (default 5)" },
    responses: { 200: ["Throughput", throughput] },
  },
  "POST /v2/schedules/:id/trigger": {
    auth: "token",
    tag: "Schedules",
    summary: "Run now: publish the schedule's message once, at once, leaving its ticks alone",
    description: "A Ferry extension (docs/schedules.md \"Run now\"). Counts against the daily quota like a publish.",
    params: { id: "Schedule id" },
    responses: { 200: ["Published", obj({ messages: arr(obj({ messageId: str(), url: str() })) })] },
  },
};
