import type { WireError } from "../../threads/wire.js";

/**
 * What crosses between the main thread and the store thread (docs/threading.md). Everything is structured-cloned,
 * except byte arrays, which are moved (transferred: src/threads/wire.ts) so a message body is copied at most once.
 */

/** One store call: `[id, method, params]`. Calls of one event-loop turn travel together in one `CallBatch`. */
export type Call = [id: number, method: string, params: unknown];
export interface CallBatch {
  calls: Call[];
}

/** One answer: `[id, true, value]` or `[id, false, error]`. */
export type Answer = [id: number, ok: true, value: unknown] | [id: number, ok: false, error: WireError];

export type FromStoreThread =
  | { ready: { capabilities: unknown; subscribeDue: boolean } }
  | { failed: WireError }
  | { answers: Answer[] }
  /** Another node (or this one) made messages due: the dispatcher claims now. */
  | { event: "due" }
  /** An account changed (on this node or, through NOTIFY, on another): cached accounts are stale. */
  | { event: "accounts" };

export type ToStoreThread = CallBatch | { subscribeDue: boolean };
