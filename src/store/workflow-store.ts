import type {
  HistoryEntry,
  NewWorkflowRun,
  RunFilter,
  RunState,
  StepDelivery,
  Waiter,
  WorkflowRun,
} from "../domain/workflow.js";
import type { InsertItem, InsertResult } from "./store-params.js";

/**
 * Workflow runs (docs/workflows.md): runs, their ordered step history, waiters and early events. Every write that
 * changes a run locks the run's row first, so appends to one run are applied one at a time in history order and a
 * run that ended accepts nothing more, with several nodes on one PostgreSQL as with SQLite's single writer.
 */

/** A step appended to a run together with the message that delivers it. */
export interface StepAppend {
  item: InsertItem;
  callType: string;
  /**
   * A step the SDK published: the run's trigger settings apply to its message (`withRunConfig`, contract §4.2), read
   * with the append under the run's lock, so that the publish reads the run once. `ownRetries`: the step set its own.
   */
  runConfig?: { ownRetries: boolean };
}

/** A history append to another run (the invoker of a run that ends), applied only while that run is started. */
export interface RunFollowUp {
  accountId: string;
  runId: string;
  step: StepAppend;
}

/** The end of a run: success (E4), cancel (E5/E6) or failure (the last failed attempt of one of its steps). */
export interface RunEnd {
  accountId: string;
  runId: string;
  state: Exclude<RunState, "RUN_STARTED">;
  result?: string;
  dlqId?: string;
  /** The failure callback message born of the failed attempt (same transaction). */
  failureMessageId?: string;
  now: number;
  followUp?: RunFollowUp;
  /**
   * Without `followUp`: append the end to the run's invoker, if it has one (contract §6.5), built from the run's row
   * in the end's transaction (`invokeFollowUp`), so that the caller need not read the run first.
   */
  followInvoker?: boolean;
}

export type WaitRegistration =
  | { registered: true }
  | { registered: false; reason: "ended"; run?: WorkflowRun }
  /** An event for this run and id came first (lookback): nothing was written; resolve the wait with it. */
  | { registered: false; reason: "event"; data: Buffer };

export interface WorkflowStore {
  /**
   * Creates the run, its history entry 0 (the payload) and its first message in one transaction. An existing run id
   * writes nothing and answers `created: false` with that run, except that `restartRest` replaces a run created by
   * `POST /v2/trigger` (restTrigger) with this one.
   */
  workflowRunCreate(p: {
    run: NewWorkflowRun;
    item: InsertItem;
    now: number;
    restartRest?: boolean;
    /** Entries kept from an earlier run (DLQ resume): written first, the item's entry after them. */
    history?: HistoryEntry[];
  }): Promise<
    { created: true; result: InsertResult } | { created: false; run?: WorkflowRun }
  >;
  workflowRunGet(p: { accountId: string; runId: string }): Promise<WorkflowRun | undefined>;
  /**
   * Appends steps and inserts their messages while the run is RUN_STARTED; otherwise writes nothing. A step whose item
   * asks for a lease (the publish fast path) and got it comes back with its `delivery` (one step only): the run and
   * the history up to its entry, read in the append's transaction, so this node sends it without another read.
   */
  workflowStepAppend(p: { accountId: string; runId: string; steps: StepAppend[]; now: number }): Promise<
    { appended: true; results: InsertResult[]; delivery?: StepDelivery } | { appended: false; run?: WorkflowRun }
  >;
  /** The run's history in order (all of it). */
  workflowHistory(p: { accountId: string; runId: string }): Promise<HistoryEntry[]>;
  /**
   * What a step or timeout message delivers: the run and its history up to the message's entry. A timeout message
   * (`waiterId`) becomes a history entry (its body) here, once, if its waiter is still registered; a message of a run
   * that is no longer started, or whose waiter was notified, answers `deliver: false`.
   */
  workflowDeliveryPrepare(p: {
    accountId: string;
    runId: string;
    messageId: string;
    waiterId?: string;
    body?: Buffer;
    now: number;
  }): Promise<{ deliver: true; run: WorkflowRun; history: HistoryEntry[] } | { deliver: false; run?: WorkflowRun }>;
  /**
   * Inserts a failure callback sent again (the DLQ's callback retry) and makes it the run's failure callback message,
   * in one transaction; false when the run is gone.
   */
  workflowFailureResend(p: { accountId: string; runId: string; item: InsertItem; now: number }): Promise<boolean>;
  /**
   * Ends a started run (and removes its waiters); `ended: false` when it had ended already or does not exist. `run`
   * is the run as it is now; `followedUp`: a step was appended to its invoker (its message waits for a claim).
   */
  workflowRunEnd(p: RunEnd): Promise<{ ended: boolean; run?: WorkflowRun; followedUp?: boolean }>;
  /** Cancels up to `count` started runs matching the filter; answers the runs it cancelled. */
  workflowRunCancelMany(p: { accountId: string; filter: RunFilter; count: number; now: number }): Promise<WorkflowRun[]>;
  /** Runs newest first; `cursor` is opaque. */
  workflowRunList(p: { accountId: string; filter: RunFilter; cursor?: string; count: number }): Promise<{
    runs: WorkflowRun[];
    cursor?: string;
  }>;
  /** Registers a waiter and inserts its timeout message, if the run is started and no early event waits for it. */
  workflowWaitRegister(p: { waiter: Waiter; timeoutItem: InsertItem; now: number }): Promise<WaitRegistration>;
  /** Consumes the early event of (run, event) and appends the wait's result; false when the event or run is gone. */
  workflowWaitResolve(p: { accountId: string; runId: string; eventId: string; step: StepAppend; now: number }): Promise<
    boolean
  >;
  /** Live waiters of an event (all of the account's runs, or one run's). */
  workflowWaiterList(p: { accountId: string; eventId: string; runId?: string }): Promise<Waiter[]>;
  /**
   * Resolves the given waiters: each one still registered is removed and its result step appended and delivered.
   * Answers the waiter ids it resolved. When none was resolved and `lookback` is set, the event is kept for a later
   * wait of that run, unless a waiter of that run and event registered meanwhile (read under the run's lock): then
   * nothing is kept, and the caller notifies again.
   */
  workflowNotifyApply(p: {
    accountId: string;
    deliveries: { waiterId: string; runId: string; step: StepAppend }[];
    lookback?: { runId: string; eventId: string; data: Buffer };
    now: number;
  }): Promise<string[]>;
  /** Live waiters of all accounts, for /metrics. */
  workflowWaiterCount(): Promise<number>;
  /** Runs by state, for /metrics and statistics. */
  workflowRunCounts(p: { accountId?: string; since?: number }): Promise<Record<RunState, number>>;
  /** Deletes up to `limit` runs that ended before `before`, with their history, waiters and events. */
  workflowRetentionDelete(p: { before: number; limit: number }): Promise<number>;
}
