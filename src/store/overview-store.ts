/**
 * Read-outs of one account's current activity for the console's overview (docs/console.md): how many messages are
 * in flight and how much of today's request quota is used. Merged into `Store`; both adapters implement it.
 */
export interface AccountActivity {
  /** Messages not yet finished: waiting, being delivered or waiting for a retry (not the rows kept after they ended). */
  inFlight: number;
  /** Publish-type requests counted against the UTC day starting at `day` (what the daily quota compares). */
  quotaUsed: number;
  /** Entries in the dead letter queue. */
  dlqSize: number;
}

export interface OverviewStore {
  /** Reads only; nothing is written, not even the day's empty quota row. */
  accountActivity(p: { accountId: string; day: number }): Promise<AccountActivity>;
}
