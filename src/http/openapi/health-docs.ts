import { AccountHealth, QueueThroughput } from "../schemas/account.js";
import { ScheduleTriggered } from "../schemas/schedules.js";
import type { RouteDoc } from "./route-doc.js";

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
    responses: { 200: ["Health", AccountHealth] },
  },
  "GET /v2/account/queue-throughput": {
    auth: "token",
    tag: "Account",
    summary: "Messages each queue delivered over the last minutes, and per minute",
    description: "A Ferry extension (docs/console.md \"Queues\").",
    query: { minutes: "The window, 1..60 (default 5)" },
    responses: { 200: ["Throughput", QueueThroughput] },
  },
  "POST /v2/schedules/:id/trigger": {
    auth: "token",
    tag: "Schedules",
    summary: "Run now: publish the schedule's message once, at once, leaving its ticks alone",
    description: "A Ferry extension (docs/schedules.md \"Run now\"). Counts against the daily quota like a publish.",
    params: { id: "Schedule id" },
    responses: { 200: ["Published", ScheduleTriggered] },
  },
};
