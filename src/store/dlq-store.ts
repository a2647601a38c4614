import type { DlqEntry } from "../domain/records.js";
import type { MessageFilter, Order } from "./store-params.js";

/**
 * Dead letter queue capability (docs/dlq.md). Entries are written by `messageFinish` when a message fails
 * for good; this interface reads, deletes and trims them. Every operation is a plain statement on shared state, so
 * it holds when several nodes share the database.
 */

/** DLQ filters: the message filters (without host/path, which the DLQ refuses) plus ids and response status. */
export interface DlqFilter extends Omit<MessageFilter, "host" | "path"> {
  dlqIds?: string[];
  responseStatus?: number[];
  /** Entries of workflow runs only (`source=workflow`, docs/workflows.md "DLQ"). */
  workflowOnly?: boolean;
  /** Entries of these runs. */
  workflowRunId?: string[];
}

export type { DlqEntry } from "../domain/records.js";

export interface DlqStore {
  /** One page of entries after `cursor` in the given order; `cursor` is set only when more entries follow. */
  dlqList(p: { accountId: string; filter: DlqFilter; cursor?: string; count: number; order: Order }): Promise<{
    entries: DlqEntry[];
    cursor?: string;
  }>;
  dlqGet(p: { accountId: string; dlqId: string }): Promise<DlqEntry | undefined>;
  /**
   * Deletes matching entries, oldest first, after `cursor` and up to `count` (all of them when `count` is absent).
   * An empty filter matches every entry of the account. `cursor` is set only when matching entries remain.
   */
  dlqDelete(p: { accountId: string; filter: DlqFilter; count?: number; cursor?: string }): Promise<{
    deleted: number;
    cursor?: string;
  }>;
  /** Accounts that have at least one entry: the trimmer's work list. */
  dlqAccountIds(): Promise<string[]>;
  /**
   * Retention: deletes up to `limit` of the account's entries that failed before `before`, then, while more than
   * `maxSize` remain, the oldest ones (again at most `limit` in all). Returns how many were deleted.
   */
  dlqTrim(p: { accountId: string; before: number; maxSize: number; limit: number }): Promise<number>;
}
