/** Shapes of Ferry's API answers the console reads (docs/console.md lists the routes). */

export type Headers = Record<string, string[]>;

export interface LogEntry {
  time: number;
  messageId: string;
  state: string;
  url: string;
  error?: string;
  nextDeliveryTime?: number;
  topicName?: string;
  endpointName?: string;
  queueName?: string;
  scheduleId?: string;
  callerIp?: string;
  header?: Headers;
  body?: string;
  bodyBase64?: string;
  /** The body was cut to the page's bound (src/http/views/page-budget.ts). */
  bodyTruncated?: boolean;
  responseStatus?: number;
  responseHeaders?: Headers;
  responseBody?: string;
  method?: string;
  callback?: string;
  failureCallback?: string;
  maxRetries?: number;
  dlqId?: string;
  labels?: string[];
  flowControlKey?: string;
  retryDelayExpr?: string;
  /** The attempt timeout in ms (CREATED entries). */
  timeout?: number;
  parallelism?: number;
  rate?: number;
  /** Flow-control period in seconds. */
  period?: number;
}

export interface MessageRecord {
  messageId: string;
  url: string;
  method: string;
  maxRetries: number;
  notBefore: number;
  createdAt: number;
  header?: Headers;
  body?: string;
  bodyBase64?: string;
  topicName?: string;
  queueName?: string;
  scheduleId?: string;
  callback?: string;
  failureCallback?: string;
  labels?: string[];
  flowControlKey?: string;
}

export interface DlqEntry extends MessageRecord {
  dlqId: string;
  responseStatus: number;
  responseHeader?: Headers;
  responseBody?: string;
  responseBodyBase64?: string;
  /** When it entered the DLQ (Unix ms). */
  failedAt?: number;
  /** Why the last attempt failed (docs/dlq.md "Cause"). */
  failureCause?: FailureCause;
}

/** Why an attempt failed: its kind, a one-line summary, and the network error as recorded. */
export interface FailureCause {
  kind: "http" | "refused" | "timeout" | "tls" | "dns" | "reset" | "egress" | "network";
  summary: string;
  error?: string;
}

// Wire shapes come from the server's schemas (src/http/schemas/, docs/architecture.md "Wire shapes").
export type { Queue, Topic } from "../../../src/http/schemas/groups-queues.js";
export type { SigningKeys } from "../../../src/http/schemas/keys.js";
export type {
  AccountHealth,
  AccountOverview,
  Limits,
  Point,
  QueueThroughput,
  UsageStats,
} from "../../../src/http/schemas/account.js";
export type { FlowKey } from "../../../src/http/schemas/flow-control.js";
export type { ActionPlan, MessageActions } from "../../../src/http/schemas/message-actions.js";
export type { MessageListEntry, MessageListPage } from "../../../src/http/schemas/message-list.js";
export type { ServerConfig } from "../../../src/http/schemas/operations.js";
export type { Schedule, ScheduleTriggered } from "../../../src/http/schemas/schedules.js";
export type { ManagementAccount } from "../../../src/http/schemas/management.js";
export type { WorkflowRun, WorkflowStep, WorkflowStepGroup } from "../../../src/http/schemas/workflows.js";

/**
 * A workflow DLQ entry (`GET /v2/dlq?source=workflow`): the failed step's message plus its run's fields. Kept here as
 * an extension of DlqEntry until the DLQ entry's wire shape lands (src/http/schemas/, issue 30 item 1).
 */
export interface WorkflowDlqEntry extends DlqEntry {
  workflowRunId?: string;
  workflowUrl?: string;
  workflowCreatedAt?: number;
  label?: string;
  failureCallbackInfo?: { state?: string; responseStatus?: number };
}

