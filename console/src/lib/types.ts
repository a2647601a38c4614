/** Shapes of Ferry's API answers the console reads (docs/console.md lists the routes). */

// Wire shapes come from the server's schemas (src/http/schemas/, docs/architecture.md "Wire shapes").
import type { DlqPageEntry } from "../../../src/http/schemas/dlq.js";
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
export type { LogEntry } from "../../../src/http/schemas/logs.js";
export type { MessageRecord } from "../../../src/http/schemas/messages.js";
export type { DlqEntry, DlqPageEntry, FailureCause } from "../../../src/http/schemas/dlq.js";

/** A workflow DLQ entry (`GET /v2/dlq?source=workflow`): the failed step's message plus its run's fields. */
export type WorkflowDlqEntry = DlqPageEntry;
