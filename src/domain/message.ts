import type { HeaderMap } from "./headers.js";
import type { DialectName } from "./dialect.js";
import type { RedactSpec } from "./redact.js";

/**
 * Internal states of a live row of the `messages` table. Public log states (docs/states.md) are a superset. A row that
 * derives its log (`derivedLog`) stays after it ends, as DELIVERED, FAILED or CANCELED (`EndedState`), until log
 * retention; no read of live messages ever returns such a row.
 * - CREATED: accepted, waiting for its first attempt (possibly delayed).
 * - RETRY: a failed attempt is behind it; the next is due at `dueAt`.
 * - ACTIVE: leased by a node; an attempt is in flight.
 * - QUEUED: in a FIFO queue behind other messages (not yet eligible).
 * - WAITING: held by its flow-control key's limits (the key's wait list).
 * - HELD: delivered or failed, but its callbacks must finish before the next message of its queue may start.
 */
export type MessageState = "CREATED" | "RETRY" | "ACTIVE" | "QUEUED" | "WAITING" | "HELD";

/** The state of a row that ended and is kept for its log (docs/states.md "The message row"). */
export type EndedState = "DELIVERED" | "FAILED" | "CANCELED";

export type LogState =
  | "CREATED"
  | "ACTIVE"
  | "RETRY"
  | "ERROR"
  | "DELIVERED"
  | "FAILED"
  | "CANCEL_REQUESTED"
  | "CANCELED";

/** What kind of delivery a message is: an ordinary publish, or a callback published for another message. */
export type MessageKind = "message" | "callback" | "failure_callback";

/** How a callback message is configured (`Svc-Callback-*` / `Svc-Failure-Callback-*`). */
export interface CallbackConfig {
  url: string;
  headers: HeaderMap;
  method?: string;
  retries?: number;
  timeoutMs?: number;
  retryDelayExpr?: string;
}

export interface FlowControl {
  key: string;
  parallelism?: number;
  rate?: number;
  periodSec: number;
}

/** The immutable configuration of one message, stored as JSON beside its indexed columns. */
export interface MessageSpec {
  method: string;
  /** Headers forwarded to the destination (canonical names; Content-Type included). */
  headers: HeaderMap;
  retries: number;
  retryDelayExpr?: string;
  /** Svc-Timeout; the plan's timeout still caps it at delivery time. */
  timeoutMs?: number;
  callback?: CallbackConfig;
  failureCallback?: CallbackConfig;
  labels?: string[];
  redact?: RedactSpec;
  flowControl?: FlowControl;
  /**
   * The names its publisher used (docs/messaging.md "Dialects"): it is delivered, signed and called back in them,
   * and so are its callbacks, retries and DLQ retries. Absent on records written before dialects were per message:
   * those follow FERRY_DIALECT.
   */
  dialect?: DialectName;
  /** Set on the messages of a workflow run (docs/workflows.md). */
  workflow?: WorkflowLink;
}

/** One live row of the `messages` table, as the store returns it. */
export interface Message {
  id: string;
  accountId: string;
  kind: MessageKind;
  /** For callbacks: the message whose attempt produced this callback. */
  parentId?: string;
  state: MessageState;
  url: string;
  body: Buffer | undefined;
  spec: MessageSpec;
  createdAt: number;
  notBefore: number;
  dueAt: number;
  /** Attempts already made and failed (the `Svc-Retried` value of the next attempt). */
  retried: number;
  topicName?: string;
  endpointName?: string;
  queueName?: string;
  scheduleId?: string;
  callerIp?: string;
  dedupId?: string;
  cancelRequested: boolean;
  leaseOwner?: string;
  leaseUntil?: number;
  /**
   * The row carries its lifecycle and its CREATED, first ACTIVE and DELIVERED log entries are derived from it
   * (docs/states.md "The message row"). Set by the insert plan (src/domain/insert-plan.ts `derivesLog`); absent for
   * rows inserted before migration 060 and for messages with Svc-Redact-Fields, whose entries are all written out.
   */
  derivedLog?: boolean;
  /** When the message was first leased (rows that derive their log only): a later lease logs its ACTIVE entry. */
  firstLeasedAt?: number;
}

/** A message about to be inserted: the store assigns nothing, so the caller knows every id up front. */
export type NewMessage = Omit<
  Message,
  "cancelRequested" | "leaseOwner" | "leaseUntil" | "derivedLog" | "firstLeasedAt"
>;

/** The destination's answer to one attempt (or the network error in its place). */
export interface AttemptResponse {
  status?: number;
  headers: HeaderMap;
  /** Response body, truncated to the account's max_message_size. */
  body: Buffer;
  error?: string;
  /** Fails the message at once, without retries (a REST trigger that reached no workflow SDK, docs/workflows.md). */
  nonRetryable?: boolean;
}

/** How a message belongs to a run (stored in its spec). */
export interface WorkflowLink {
  runId: string;
  /**
   * - step: delivered to the workflow URL with the history up to its own entry (Init, results, plans, notify results);
   * - call: `context.call`'s request to a third party: delivered as is, its callback goes back to the run;
   * - timeout: a wait's timeout, held until the deadline; it becomes a history entry only if the waiter is still there.
   */
  role: "step" | "call" | "timeout";
  waiterId?: string;
}
