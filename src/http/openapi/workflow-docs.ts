import type { Dialect } from "../../domain/dialect.js";
import { Type } from "../schemas/common.js";
import {
  HistoryEntry,
  HookReceived,
  Notified,
  RunRef,
  RunRefs,
  RunsCancelled,
  Waiter,
  WorkflowAck,
  WorkflowDlqDeleted,
  WorkflowRunPage,
} from "../schemas/workflows.js";
import type { JsonSchema, RouteDoc } from "./route-doc.js";

/*
 * The workflow endpoints (docs/workflows.md; the contract the official SDK needs is ../shared/docs/workflow-api.md).
 * Answers are the wire shapes of src/http/schemas/workflows.ts, through which Fastify writes them.
 */
const obj = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: "object", properties });
const str: JsonSchema = { type: "string" };
const token = (p: Omit<RouteDoc, "auth" | "tag">): RouteDoc => ({ ...p, auth: "token", tag: "Workflows" });
const runFilters = {
  workflowRunIds: "Run ids (repeat the key)",
  workflowUrl: "Workflow URL (prefix unless workflowUrlExactMatch=true)",
  workflowUrlExactMatch: "true: workflowUrl must match exactly",
  label: "Run label",
  fromDate: "Created at or after (unix ms)",
  toDate: "Created at or before (unix ms)",
  callerIp: "Caller IP of the trigger",
  flowControlKey: "The run's flow-control key",
};
const dlqFilters = {
  dlqIds: "DLQ ids (repeat the key)",
  workflowRunId: "Run ids",
  workflowUrl: "Workflow URL",
  fromDate: "Failed at or after (unix ms)",
  toDate: "Failed at or before (unix ms)",
  count: "At most this many",
};

export function workflowDocs(d: Dialect, hookMethods: readonly string[]): Record<string, RouteDoc> {
  const runId = d.header("Workflow-RunId");
  const docs: Record<string, RouteDoc> = {
    "GET /v2/workflows/runs/:id": token({
      summary: "A started run's step history (the SDK's lazy fetch); 404 once the run ended",
      params: { id: "Run id" },
      responses: { 200: ["The history, oldest first", Type.Array(HistoryEntry)] },
    }),
    "DELETE /v2/workflows/runs/:id": token({
      summary: "Finish a run with its result (cancel=false) or cancel it (cancel=true); 400 once it ended",
      params: { id: "Run id" },
      query: { cancel: "true or false" },
      body: "raw",
      responses: { 200: ["Ended", WorkflowAck] },
    }),
    "DELETE /v2/workflows/runs": token({
      summary: "Cancel started runs by id or filter",
      query: { ...runFilters, count: "At most this many (default 100)" },
      responses: { 200: ["Cancelled", RunsCancelled] },
    }),
    "POST /v2/wait/:eventId": token({
      summary: `Wait for an event (waitForEvent); the ${runId} header names the run`,
      params: { eventId: "Event id" },
      headers: { [runId.toLowerCase()]: "The waiting run" },
      body: obj({ url: str, timeout: str, timeoutUrl: str, timeoutHeaders: { type: "object" }, step: { type: "object" } }),
      responses: { 200: ["Registered (or resolved at once by an early event)", WorkflowAck] },
    }),
    "POST /v2/notify/:eventId": token({
      summary: "Deliver an event to every waiter; [] when nobody waits",
      params: { eventId: "Event id" },
      body: "raw",
      responses: { 200: ["The waiters notified", Type.Array(Notified)] },
    }),
    "POST /v2/notify/:runId/:eventId": token({
      summary: "Deliver an event to one run's waiter, or keep it for the run's later wait (lookback)",
      params: { runId: "Run id", eventId: "Event id" },
      body: "raw",
      responses: { 200: ["The waiters notified", Type.Array(Notified)] },
    }),
    "GET /v2/waiters/:eventId": token({
      summary: "Live waiters of an event",
      params: { eventId: "Event id" },
      responses: { 200: ["Waiters", Type.Array(Waiter)] },
    }),
    "GET /v2/workflows/events": token({
      summary: "Runs with their steps, newest first (the SDK's logs())",
      query: {
        ...runFilters,
        workflowRunId: "Run id",
        state: "RUN_STARTED, RUN_SUCCESS, RUN_FAILED or RUN_CANCELED",
        workflowCreatedAt: "Created at (unix ms)",
        groupBy: "workflowRunId",
        cursor: "Cursor of the next page",
        count: "Page size (default 10, at most 100)",
      },
      responses: { 200: ["A page of runs", WorkflowRunPage] },
    }),
    "POST /v2/workflows/dlq/callback/:dlqId": token({
      summary: "Send a failed run's failure callback again",
      params: { dlqId: "DLQ id" },
      responses: { 200: ["The run", RunRef] },
    }),
    "DELETE /v2/workflows/dlq": token({
      summary: "Delete workflow DLQ entries by id or filter",
      query: dlqFilters,
      responses: { 200: ["Deleted", WorkflowDlqDeleted] },
    }),
    "DELETE /v2/workflows/dlq/:dlqId": token({
      summary: "Delete one workflow DLQ entry",
      params: { dlqId: "DLQ id" },
      responses: { 200: ["Deleted", WorkflowDlqDeleted] },
    }),
    "POST /v2/trigger/*": token({
      summary: "Start a run from a plain request; the SDK endpoint takes it over",
      params: { "*": "The workflow URL" },
      body: "raw",
      responses: { 200: ["Started", RunRef] },
    }),
  };
  for (const mode of ["resume", "restart"] as const) {
    const summary =
      mode === "resume"
        ? "New runs that keep the steps before the failed one and deliver it again"
        : "New runs from the payload, with the same settings";
    docs[`POST /v2/workflows/dlq/${mode}`] = token({
      summary,
      query: dlqFilters,
      headers: { [d.key("retries")]: "Retries of the new runs", [d.key("flow-control-key")]: "Flow-control key" },
      responses: { 200: ["The new runs", RunRefs] },
    });
    docs[`POST /v2/workflows/dlq/${mode}/:dlqId`] = token({
      summary: `${summary} (one entry)`,
      params: { dlqId: "DLQ id" },
      responses: { 200: ["The new run", RunRefs] },
    });
  }
  for (const method of hookMethods) {
    docs[`${method} /v2/workflows/hooks/:userId/:runId/:eventId`] = {
      tag: "Workflows",
      auth: "none",
      summary: "A webhook made by createWebhook: the call becomes the run's event (kept when it comes first)",
      params: { userId: "The account id", runId: "Run id", eventId: "Event id" },
      ...(method === "GET" || method === "DELETE" ? {} : { body: "raw" as const }),
      responses: { 200: ["Received", HookReceived] },
    };
  }
  return docs;
}
