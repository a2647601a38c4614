import type { DestinationShares } from "../domain/destination.js";
import type { LogDetails, LogEntry } from "../domain/log.js";
import type { MessageActionStore } from "./message-action-store.js";
import type { MessageRowStore } from "./message-row-store.js";
import type { Message, NewMessage } from "../domain/message.js";
import type { Account, AccountPatch, Outcome } from "../domain/records.js";
import type { DlqStore } from "./dlq-store.js";
import type { FlowControlStore } from "./flow-control-store.js";
import type { HealthStore } from "./health-store.js";
import type { ManagementStore } from "./management-store.js";
import type { NodeStore } from "./node-store.js";
import type { OpsStore } from "./ops-store.js";
import type { OverviewStore } from "./overview-store.js";
import type { QueueStore } from "./queue-store.js";
import type { RetentionStore } from "./retention-store.js";
import type { ScheduleStore } from "./schedule-store.js";
import type { SearchDocumentStore } from "./search-document-store.js";
import type { TopicStore } from "./topic-store.js";
import type { RunEnd, WorkflowStore } from "./workflow-store.js";
import type { InsertItem, InsertResult, LogFilter, MessageFilter, Order, TokenCheck } from "./store-params.js";

/**
 * The one storage interface (architecture.md). Methods are `<entity><Verb>` with a single params object, async from
 * day one so SQLite and PostgreSQL fit behind it. Every query that depends on time takes `now`.
 * Capability interfaces for the other issues (DLQ, topics, queues, schedules, flow control, management) extend this
 * one in files of their own.
 */
// The types several capabilities share live in store-params.ts (no capability imports this file back).
export type {
  InsertItem,
  InsertResult,
  TokenCheck,
  LogFilter,
  MessageFilter,
  Order,
  UsageMetric,
} from "./store-params.js";
// The shared records live in src/domain/records.ts (docs/architecture.md); re-exported for the store's own files.
export type { Account, AccountPatch, DlqResponse, Outcome } from "../domain/records.js";

export interface StoreCapabilities {
  /**
   * True when exactly one Ferry process uses the database (SQLite): at boot, every lease left by an earlier process
   * is dead and is released at once instead of waiting for it to expire.
   */
  singleNode: boolean;
}

export interface LogRecord extends LogEntry {
  /** Position of the entry, usable as a cursor. */
  seq: string;
  /** The message's CREATED entry details (header, body, method …), merged in by the store. */
  created?: LogDetails;
}

export interface FinishParams {
  message: Message;
  owner: string;
  now: number;
  outcome: Outcome;
  /** Log entries for this transition (ERROR, RETRY, DELIVERED, FAILED, CANCELED …). */
  logs: LogEntry[];
  /** Callback and failure-callback messages born of this attempt, inserted in the same transaction. */
  newMessages: NewMessage[];
  /** A workflow step's last failed attempt ends its run in the same transaction (docs/workflows.md). */
  workflowEnd?: RunEnd;
}

export interface Store
  extends DlqStore,
    FlowControlStore,
    HealthStore,
    ManagementStore,
    MessageActionStore,
    MessageRowStore,
    NodeStore,
    OpsStore,
    OverviewStore,
    QueueStore,
    RetentionStore,
    ScheduleStore,
    SearchDocumentStore,
    TopicStore,
    WorkflowStore {
  readonly capabilities: StoreCapabilities;
  migrate(): Promise<void>;
  close(): Promise<void>;
  /**
   * Optional: calls `onDue` whenever another node (or this one) made messages due now or soon, so the dispatcher
   * claims at once instead of at its next poll. PostgreSQL implements it with LISTEN/NOTIFY; SQLite (one node) does
   * not need it. Returns the unsubscribe function. Never throws: a lost connection is re-established inside.
   */
  subscribeDue?(onDue: () => void): () => void;
  /**
   * Optional: calls `onChange` whenever an account may have changed on another node (PostgreSQL: NOTIFY on
   * `ferry_accounts` from a trigger on the table), so a node's account cache forgets what it holds. Writes through
   * this node invalidate it directly. Returns the unsubscribe function; never throws.
   */
  subscribeAccountChanges?(onChange: () => void): () => void;

  accountInsert(p: { account: Account }): Promise<void>;
  accountGet(p: { id: string }): Promise<Account | undefined>;
  /**
   * The account whose token or read-only token this is; the caller compares to tell which one matched.
   * `checkedAtCommit`: the caller has the token checked again where it writes (`messageInsertMany`'s `tokenCheck`),
   * so the main thread's account cache may answer on a store shared by several nodes too (thread/account-cache.ts).
   * Stores themselves always read.
   */
  accountGetByToken(p: { token: string; checkedAtCommit?: boolean }): Promise<Account | undefined>;
  /** The first account ever created: the default account of a single-tenant install. */
  accountFirst(): Promise<Account | undefined>;
  /**
   * Inserts the default account unless an account exists already; false when one did. Atomic across nodes: several
   * nodes starting together on an empty database insert one default account, not one each.
   */
  accountInsertDefault(p: { account: Account }): Promise<boolean>;
  /**
   * Overwrites the given fields (token rotation, configured keys, plan, state, owner …). Returns the updated account.
   */
  accountUpdate(p: { id: string; patch: AccountPatch }): Promise<Account>;
  /** Signing-key rotation: current ← next, next ← `next`. Returns the updated account. */
  accountRotateKeys(p: { id: string; next: string }): Promise<Account>;

  /** Inserts messages with their CREATED (and, when leased, ACTIVE) log entries; duplicates are skipped. */
  messageInsertMany(p: {
    items: InsertItem[];
    now: number;
    dedupWindowMs: number;
    /** Only PostgreSQL checks it: a single-node store's cache forgets a token before its change answers. */
    tokenCheck?: TokenCheck;
  }): Promise<InsertResult[]>;
  messageGet(p: { accountId: string; id: string }): Promise<Message | undefined>;
  /**
   * Leases up to `limit` due messages to `owner` until `leaseUntil`, writing their ACTIVE log entries. Flow control
   * and max_global_parallelism are decided here: a due message over a limit moves to WAITING instead.
   * `liveClockOffsetMs`, when given, says the caller's clock is real time plus this offset: the store reads that
   * clock again once the claim holds its flow-control locks (with several nodes a claim may wait for another's locks,
   * and a rate window must start when its deliveries really go, not when the claim began). Absent for a pinned test
   * clock, whose `now` stands. A number, not a function, because the store runs in its own thread.
   * `destinations`: the claiming node's destination shares (src/domain/destination.ts): no message goes to a
   * destination past its share, and the rows of a destination at its share are walked past, left due, so that one
   * destination's backlog never holds back the others (docs/reliability.md "Isolation").
   */
  messageLeaseDue(p: {
    now: number;
    limit: number;
    owner: string;
    leaseUntil: number;
    liveClockOffsetMs?: number;
    destinations?: DestinationShares;
  }): Promise<Message[]>;
  /**
   * Extends the leases of the attempts `owner` still runs: one statement per node instead of one per message.
   * Only the listed ids are renewed, so a message whose attempt died inside a live node still expires and is rescued.
   */
  messageRenewLeases(p: { owner: string; ids: string[]; leaseUntil: number }): Promise<number>;
  /** Makes due again the messages whose lease expired (their node died), or every lease not held by `exceptOwner`. */
  messageReleaseLeases(p: { now: number; expiredOnly: boolean; exceptOwner: string }): Promise<number>;
  /**
   * Earliest due time of a message waiting for an attempt (or of a flow-control wait list), to arm the timer.
   * `after`: only messages due later than this (a claim that walked past destinations at their share left the
   * messages due now on purpose: docs/reliability.md "Isolation").
   */
  messageNextDueAt(p: { now: number; after?: number }): Promise<number | undefined>;
  /** Applies an attempt's outcome if `owner` still holds the lease; false when the lease was lost meanwhile. */
  messageFinish(p: FinishParams): Promise<boolean>;
  /** Cancels matching messages (all of the account's when the filter is empty); returns how many. */
  messageCancel(p: { accountId: string; now: number; filter: MessageFilter; count?: number }): Promise<number>;

  logList(p: { accountId: string; filter: LogFilter; cursor?: string; count: number; order: Order }): Promise<{
    logs: LogRecord[];
    cursor?: string;
  }>;
}
