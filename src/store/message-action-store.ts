import type { Message } from "../domain/message.js";
import type { DlqFilter } from "./dlq-store.js";
import type { InsertItem, InsertResult } from "./store-params.js";

/**
 * What the console's actions on one message need (docs/messaging.md "Retry and replay"): the message's row in any
 * state (a kept, ended row too: docs/states.md "The message row"), the replays that link back to it, bringing a
 * message that waits out its retry backoff forward, and the DLQ's size under a filter. Merged into `Store`; both
 * adapters implement it (`message-actions.ts`).
 */
export interface StoredMessage {
  /** The row as published (body and spec), whatever its state; `state` may be an ended one (DELIVERED, FAILED…). */
  message: Message;
  /** The row's state as stored: a live one, an ended one, or HELD. */
  state: string;
  /** The message this one replays. */
  replayOf?: string;
}

/** A stored message from its row's parts, as both adapters read it (`replay_of` is NULL for a message no replay). */
export function storedMessage(message: Message, state: string, replayOf: string | null): StoredMessage {
  return replayOf === null ? { message, state } : { message, state, replayOf };
}

export interface ReplayRecord {
  messageId: string;
  createdAt: number;
}

export interface MessageActionStore {
  /** The row of `id` in any state; undefined once it left the table (retention, or a row that writes its log). */
  messageStoredGet(p: { accountId: string; id: string }): Promise<StoredMessage | undefined>;
  /** The replays of `id`, oldest first, at most `limit`. */
  messageReplayList(p: { accountId: string; id: string; limit: number }): Promise<ReplayRecord[]>;
  /**
   * Inserts a replay through the publish insert path and records `replayOf` on its row in the same transaction, so a
   * replay never exists without its link.
   */
  messageReplayInsert(p: { item: InsertItem; replayOf: string; now: number; dedupWindowMs: number }): Promise<InsertResult>;
  /**
   * Makes a message that waits out its retry backoff (state RETRY) due at `now`. False when it is in any other state
   * (it was claimed, cancelled or ended meanwhile): nothing changed.
   */
  messageRetryNow(p: { accountId: string; id: string; now: number }): Promise<boolean>;
  /** How many DLQ entries match the filter. */
  dlqCount(p: { accountId: string; filter: DlqFilter }): Promise<number>;
}
