import type { Queue } from "../domain/records.js";

export type { Queue } from "../domain/records.js";

/** The queue capability of the store (docs/queues.md). Merged into `Store` below, so adapters must implement it. */
export interface QueueStore {
  /**
   * Creates or updates a queue. A new queue is refused when the account already has `maxQueues` queues; an
   * existing one can always be updated (docs/queues.md "Rules"). Promotes or holds back its messages in the same
   * transaction.
   */
  queueUpsert(p: {
    accountId: string;
    name: string;
    parallelism: number;
    paused: boolean;
    now: number;
    maxQueues: number;
  }): Promise<"created" | "updated" | "max_queues">;
  /** Makes sure the queue exists (parallelism 1, running) before an enqueue; never changes an existing one. */
  queueEnsure(p: {
    accountId: string;
    name: string;
    now: number;
    maxQueues: number;
  }): Promise<"exists" | "created" | "max_queues">;
  queueGet(p: { accountId: string; name: string }): Promise<Queue | undefined>;
  queueList(p: { accountId: string }): Promise<Queue[]>;
  /** Removes the queue record; false when it did not exist. Its messages are cancelled by the caller. */
  queueDelete(p: { accountId: string; name: string }): Promise<boolean>;
  /** Pauses or resumes; false when the queue does not exist. Resuming promotes the head of the queue. */
  queueSetPaused(p: { accountId: string; name: string; paused: boolean; now: number }): Promise<boolean>;
}
