/** Shapes of Ferry's API answers the console reads (docs/console.md lists the routes). */

export interface ServerConfig {
  dialect: "neutral" | "upstash";
  headerPrefix: string;
  tokenQuery: string;
  managementSegment: string;
  fixedPlanPrefix: string;
  version: string;
}

export type Limits = Record<string, number>;

export interface AccountOverview {
  accountId: string;
  plan: string;
  readOnly: boolean;
  limits: Limits;
  quota: { used: number; limit: number | null; resetsAt: number };
  inFlight: number;
  dlqSize: number;
}

export interface ManagementAccount {
  id: string;
  token: string;
  read_only_token?: string;
  state: string;
  active: boolean;
  type: string;
  reserved_type: string;
  creation_time: number;
  region: string;
}

export type Headers = Record<string, string[]>;

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
export type { LogEntry } from "../../../src/http/schemas/logs.js";
export type { MessageRecord } from "../../../src/http/schemas/messages.js";
export type { DlqEntry, DlqPageEntry, FailureCause } from "../../../src/http/schemas/dlq.js";
import type { DlqPageEntry } from "../../../src/http/schemas/dlq.js";

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

/** One step of a run as `GET /v2/workflows/events` answers it (docs/workflows.md, the contract's §6.9). */
export interface WorkflowStep {
  stepId?: number;
  stepName?: string;
  stepType?: string;
  callType?: string;
  messageId?: string;
  /** The step's result as the SDK published it: JSON text (base64 of the event data for wait steps). */
  out?: string;
  concurrent?: number;
  state?: string;
  createdAt?: number;
  sleepFor?: number | string;
  sleepUntil?: number;
  callUrl?: string;
  callMethod?: string;
  callBody?: string;
  callHeaders?: Record<string, string[] | string>;
  callResponseStatus?: number;
  callResponseBody?: string;
  callResponseHeaders?: Record<string, string[] | string>;
  waitEventId?: string;
  timeout?: string;
  waitTimeout?: boolean;
  waitTimeoutDeadline?: number;
  invokedWorkflowRunId?: string;
  invokedWorkflowUrl?: string;
  retries?: number;
  errors?: { error?: string; body?: string; status?: number; time?: number }[];
}

export interface WorkflowStepGroup {
  type: "sequential" | "parallel" | "next";
  steps: WorkflowStep[];
}

export interface WorkflowRun {
  workflowRunId: string;
  workflowUrl: string;
  workflowState: string;
  workflowRunCreatedAt: number;
  workflowRunCompletedAt?: number;
  workflowRunResponse?: string;
  label?: string;
  dlqId?: string;
  invoker?: { workflowRunId: string; workflowUrl: string; workflowRunCreatedAt: number };
  failureFunction?: { state?: string; url?: string; failStatus?: number; failResponse?: string };
  steps: WorkflowStepGroup[];
}

/** A workflow DLQ entry (`GET /v2/dlq?source=workflow`): the failed step's message plus its run's fields. */
export type WorkflowDlqEntry = DlqPageEntry;

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
