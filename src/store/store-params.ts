import type { Message, NewMessage } from "../domain/message.js";

/**
 * The parameter and result types that several store capabilities share (docs/architecture.md "Storage"). They live
 * apart from `store.ts`, which merges the capabilities, so that no capability file imports the file that imports it
 * (test/unit/import-cycles.test.ts); `store.ts` re-exports them for the rest of src/.
 */

/**
 * Message and log filters (docs/messaging.md "Messages and logs"): values of one filter are OR'ed, different filters
 * AND'ed.
 */
export interface MessageFilter {
  messageIds?: string[];
  topicName?: string[];
  queueName?: string[];
  url?: string[];
  host?: string[];
  path?: string[];
  label?: string[];
  flowControlKey?: string[];
  scheduleId?: string[];
  callerIp?: string[];
  /** Unix ms, inclusive, on the message's creation time (or the log entry's time). */
  fromDate?: number;
  toDate?: number;
}

export interface LogFilter extends MessageFilter {
  /** Public states; IN_PROGRESS is already expanded by the caller. */
  state?: string[];
}

export type Order = "latestFirst" | "earliestFirst";

export interface InsertItem {
  message: NewMessage;
  /** Deduplication key already scoped to the destination; a live key makes the insert a duplicate. */
  dedupKey?: string;
  /** Insert already leased to this owner: the publishing node delivers it at once, without a claim round-trip. */
  leaseOwner?: string;
  leaseUntil?: number;
}

/**
 * The token a publish was authenticated with, when that came from this node's account cache on a store shared by
 * several nodes (docs/postgres.md, "Tokens checked at commit"): the insert commits only while it is still the
 * account's token and the account is active; otherwise it fails with 401 and writes nothing.
 */
export interface TokenCheck {
  accountId: string;
  token: string;
}

export interface InsertResult {
  messageId: string;
  deduplicated: boolean;
  /** The message as inserted (undefined for a duplicate). */
  message?: Message;
}

export type UsageMetric =
  | "requests"
  | "delivered"
  | "failed"
  | "retried"
  | "canceled"
  // Workflow runs started and workflow messages published (docs/workflows.md "Statistics").
  | "workflow_run"
  | "workflow_message";
