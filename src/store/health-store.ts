/**
 * Read-outs of one account's delivery health for the console (docs/console.md "Health"): publish→delivery latencies,
 * the destinations that fail, and a queue's throughput. Merged into `Store`; both adapters implement it
 * (`health.ts`). Each reads the account's rows of a time range through an index of migration 064 and at most `limit`
 * of them, newest first, so its cost follows the range and the limit, never the whole history.
 */
export interface DestinationFailures {
  url: string;
  /** Failed attempts (ERROR entries) among the entries read. */
  errors: number;
  /** Messages that failed for good (FAILED entries: each went to the DLQ) among the entries read. */
  failed: number;
  /** The newest ERROR or FAILED entry of this URL. */
  last: { messageId: string; time: number; state: string; details: string };
}

export interface HealthStore {
  /**
   * How long each message delivered in [from, to) took from publish (or from the end of the delay it asked for) to
   * its delivery, in ms: the newest `limit` deliveries (`messages_delivered`). Rows kept after they end only: a
   * message with Svc-Redact-Fields, or one still HELD for its callbacks, is not in it.
   */
  deliveryLatencyList(p: { accountId: string; from: number; to: number; limit: number }): Promise<number[]>;
  /**
   * The URLs with ERROR or FAILED entries in [from, to), read from the newest `scanLimit` such entries
   * (`logs_failures`), ranked by failed attempts, then failed messages, then the newest; `limit` of them.
   */
  destinationFailureList(p: {
    accountId: string;
    from: number;
    to: number;
    scanLimit: number;
    limit: number;
  }): Promise<{ destinations: DestinationFailures[]; scanned: number }>;
  /** Messages of each queue delivered in [from, to), from the newest `limit` deliveries (`messages_delivered`). */
  queueDeliveryList(p: {
    accountId: string;
    from: number;
    to: number;
    limit: number;
  }): Promise<{ queues: { queueName: string; delivered: number }[]; scanned: number }>;
}
