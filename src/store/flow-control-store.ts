/**
 * Flow-control part of the Store (docs/flow-control.md). The limits themselves are enforced inside
 * `messageLeaseDue` (the claim) and `messageInsertMany` (the publish fast path); these methods read and steer the
 * per-key state. Every method that may let waiting messages go sets the key's wake time to `now`, so the next claim
 * on any node releases them: callers should wake their dispatcher afterwards.
 */
export interface FlowKeyRecord {
  accountId: string;
  key: string;
  parallelism?: number;
  rate?: number;
  periodSec: number;
  /** Starts counted in the window that began at `periodStart` (unix ms); the window may already be over. */
  rateCount: number;
  periodStart: number;
  paused: boolean;
  pinnedParallelism: boolean;
  pinnedRate: boolean;
  createdAt: number;
  /** Deliveries of the key in flight now. */
  parallelismCount: number;
  /** Messages of the key held in its wait list. */
  waitListSize: number;
}

export interface FlowKeyRef {
  accountId: string;
  key: string;
  now: number;
}

export interface FlowControlStore {
  /** The account's keys, ordered by name. */
  flowKeyList(p: { accountId: string }): Promise<FlowKeyRecord[]>;
  flowKeyGet(p: { accountId: string; key: string }): Promise<FlowKeyRecord | undefined>;
  /** Starts a new rate window at `now` with a count of 0. False when the key is unknown. */
  flowKeyResetRate(p: FlowKeyRef): Promise<boolean>;
  /** While paused nothing of the key starts; the rate window keeps running. False when the key is unknown. */
  flowKeySetPaused(p: FlowKeyRef & { paused: boolean }): Promise<boolean>;
  /**
   * Fixes the given parts of the configuration (creating the key when it does not exist yet) so that incoming
   * messages can no longer change them, and restarts the rate window. `rate`/`periodSec` pin the rate part.
   */
  flowKeyPin(p: FlowKeyRef & { parallelism?: number; rate?: number; periodSec?: number }): Promise<FlowKeyRecord>;
  /** Lets messages change the chosen parts again; the pinned values stay until one does. False when unknown. */
  flowKeyUnpin(p: FlowKeyRef & { parallelism: boolean; rate: boolean }): Promise<boolean>;
  /** Deliveries of the account in flight now: what max_global_parallelism bounds. */
  flowGlobalActive(p: { accountId: string }): Promise<number>;
}
