/** Shapes of Ferry's API answers the console reads (docs/console.md lists the routes). */

import type { PlanLimits as Limits } from "../../../src/http/schemas/management.js";

export interface ServerConfig {
  dialect: "neutral" | "upstash";
  headerPrefix: string;
  tokenQuery: string;
  managementSegment: string;
  fixedPlanPrefix: string;
  version: string;
}

export interface AccountOverview {
  accountId: string;
  plan: string;
  readOnly: boolean;
  limits: Limits;
  quota: { used: number; limit: number | null; resetsAt: number };
  inFlight: number;
  dlqSize: number;
}

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

/** What retry and replay would do for a message (`GET /v2/messages/{id}/actions`), and its replay links. */
export type ActionPlan =
  | { allowed: true; kind?: "dlq" | "deliverNow"; dlqId?: string; dueAt?: number }
  | { allowed: false; reason: string };

export interface MessageActions {
  messageId: string;
  state?: string;
  retry: ActionPlan;
  replay: ActionPlan;
  replayOf?: string;
  replays: { messageId: string; createdAt: number }[];
}

export interface Schedule {
  scheduleId: string;
  cron: string;
  createdAt: number;
  destination: string;
  method: string;
  isPaused: boolean;
  retries: number;
  header?: Headers;
  body?: string;
  delay?: number;
  queueName?: string;
  labels?: string[];
  lastScheduleTime?: number;
  nextScheduleTime?: number;
  lastScheduleStates?: Record<string, string>;
  error?: string;
}

// Wire shapes come from the server's schemas (src/http/schemas/, docs/architecture.md "Wire shapes").
export type { Queue, Topic } from "../../../src/http/schemas/groups-queues.js";
export type { SigningKeys } from "../../../src/http/schemas/keys.js";
export type { ManagementAccount } from "../../../src/http/schemas/management.js";
export type { Limits };
export type { WorkflowRun, WorkflowStep, WorkflowStepGroup } from "../../../src/http/schemas/workflows.js";

export interface FlowKey {
  flowControlKey: string;
  waitListSize?: number;
  parallelismMax?: number;
  parallelismCount?: number;
  rateMax?: number;
  rateCount?: number;
  ratePeriod?: number;
  ratePeriodStart?: number;
  isPaused?: boolean;
  isPinnedParallelism?: boolean;
  isPinnedRate?: boolean;
}

export interface Point {
  x: string;
  y: number;
}

export interface UsageStats {
  daily_used: Point[];
  daily_msgsvc_messages: { id: string; data_points: Point[] }[];
  dlq_message_count: number;
}

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

/** One entry of `GET /v2/messages` (docs/messaging.md "Listing messages"): a message's current state, no body. */
export interface MessageListEntry {
  messageId: string;
  state: string;
  /** FLOW_CONTROL only: what holds it. */
  waitReason?: "flowControlKey" | "globalParallelism";
  url: string;
  topicName?: string;
  endpointName?: string;
  queueName?: string;
  scheduleId?: string;
  flowControlKey?: string;
  labels?: string[];
  attempts: number;
  lastResponseStatus?: number;
  nextDeliveryTime?: number;
  cancelRequested?: boolean;
  createdAt: number;
  firstAttemptAt?: number;
  finishedAt?: number;
  kind?: "callback" | "failureCallback";
  parentMessageId?: string;
  bodySize: number;
}

/** `GET /v2/account/health?period=…` (docs/console.md "Health"). */
export interface AccountHealth {
  period: string;
  from: number;
  to: number;
  delivered: number;
  failed: number;
  successRate: number | null;
  latency: { p50: number | null; p99: number | null; sample: number; sampleCapped: boolean };
  destinations: {
    url: string;
    failedAttempts: number;
    failedMessages: number;
    lastError: { time: number; messageId: string; error: string; status?: number; bodyStart?: string };
  }[];
  destinationsCapped: boolean;
}

/** `GET /v2/account/queue-throughput?minutes=…` (docs/console.md "Queues"). */
export interface QueueThroughput {
  minutes: number;
  from: number;
  to: number;
  queues: { queueName: string; delivered: number; perMinute: number }[];
  capped: boolean;
}

/** `POST /v2/schedules/:id/trigger` (docs/schedules.md "Run now"). */
export interface ScheduleTriggered {
  messages: { messageId: string; url: string }[];
}

/** The Schedule record's optional keys the edit form reads (docs/schedules.md "Schedule record"). */
export interface ScheduleDetails extends Schedule {
  bodyBase64?: string;
  timeout?: number;
  callback?: string;
  failureCallback?: string;
  callbackHeader?: Headers;
  failureCallbackHeader?: Headers;
  flowControlKey?: string;
  parallelism?: number;
  rate?: number;
  period?: number;
  retryDelayExpression?: string;
}
