import {
  type HistoryEntry,
  invokeFollowUp,
  type NewWorkflowRun,
  type RunState,
  type Waiter,
  type WorkflowRun,
} from "../domain/workflow.js";
import type { RunEnd, RunFollowUp } from "./workflow-store.js";

/** Row shapes of the workflow tables (migration 050), shared by both adapters; SQL stays in each adapter. */
export interface RunRow {
  seq: number;
  account_id: string;
  run_id: string;
  url: string;
  state: string;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  label: string | null;
  config: string;
  initial_body: Buffer;
  result: string | null;
  invoker: string | null;
  caller_ip: string | null;
  dlq_id: string | null;
  /** Migration 061. */
  failure_message_id: string | null;
  flow_key: string | null;
  rest_trigger: number | boolean;
  init_message_id: string;
  step_count: number;
}

export function runFromRow(r: RunRow): WorkflowRun {
  const run: WorkflowRun = {
    accountId: r.account_id,
    runId: r.run_id,
    url: r.url,
    state: r.state as RunState,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    config: JSON.parse(r.config) as WorkflowRun["config"],
    initialBody: Buffer.from(r.initial_body),
    restTrigger: r.rest_trigger === true || r.rest_trigger === 1,
    initMessageId: r.init_message_id,
  };
  if (r.completed_at !== null) run.completedAt = r.completed_at;
  if (r.label !== null) run.label = r.label;
  if (r.result !== null) run.result = r.result;
  if (r.invoker !== null) run.invoker = JSON.parse(r.invoker) as WorkflowRun["invoker"];
  if (r.caller_ip !== null) run.callerIp = r.caller_ip;
  if (r.dlq_id !== null) run.dlqId = r.dlq_id;
  if (r.failure_message_id !== null) run.failureMessageId = r.failure_message_id;
  return run;
}

/** Column values of a new run, in the order of RUN_INSERT_COLUMNS. */
export const RUN_INSERT_COLUMNS = [
  "account_id",
  "run_id",
  "url",
  "state",
  "created_at",
  "updated_at",
  "label",
  "config",
  "initial_body",
  "invoker",
  "caller_ip",
  "flow_key",
  "rest_trigger",
  "init_message_id",
  "step_count",
] as const;

export function runInsertValues(run: NewWorkflowRun, now: number, restAsNumber: boolean): unknown[] {
  return [
    run.accountId,
    run.runId,
    run.url,
    run.state,
    run.createdAt,
    now,
    run.label ?? null,
    JSON.stringify(run.config),
    run.initialBody,
    run.invoker ? JSON.stringify(run.invoker) : null,
    run.callerIp ?? null,
    run.config.flowControl?.key ?? null,
    restAsNumber ? (run.restTrigger ? 1 : 0) : run.restTrigger,
    run.initMessageId,
    1,
  ];
}

export interface StepRow {
  message_id: string;
  call_type: string;
  body: Buffer;
  created_at: number;
}

export const stepFromRow = (r: StepRow): HistoryEntry => ({
  messageId: r.message_id,
  body: Buffer.from(r.body),
  callType: r.call_type,
  createdAt: r.created_at,
});

export const waiterFromRow = (r: { waiter: string }): Waiter => JSON.parse(r.waiter) as Waiter;

/** The follow-up an end appends (RunEnd): the given one, or the invoker's, read from the ended run's row. */
export function endFollowUp(p: RunEnd, row: RunRow): RunFollowUp | undefined {
  if (p.followUp || !p.followInvoker || row.invoker === null) return p.followUp;
  const run: Pick<WorkflowRun, "accountId" | "invoker" | "callerIp"> = {
    accountId: row.account_id,
    invoker: JSON.parse(row.invoker) as WorkflowRun["invoker"],
  };
  if (row.caller_ip !== null) run.callerIp = row.caller_ip;
  return invokeFollowUp(run, p.state, p.result, p.now);
}
