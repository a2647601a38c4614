/**
 * The state a list of messages shows for one message (`GET /v2/messages`, docs/messaging.md "Listing messages"):
 * the message row's state (docs/states.md "The message row") in words an operator reads, with the live states that
 * wait split by what they wait for. Pure: the store applies the same split in SQL (`message-rows.ts` of each adapter).
 * - CREATED: due, waiting for a node to claim it.
 * - DELAYED: waiting for its delay (`Svc-Delay`, `Svc-Not-Before`): created, first attempt due later.
 * - QUEUED: behind others in its FIFO queue (a queue slot, the queue's parallelism, or a paused queue).
 * - FLOW_CONTROL: held by flow control (its key's parallelism or rate, or the account's global parallelism).
 * - ACTIVE: an attempt is in flight.
 * - RETRY: an attempt failed; the next is due at its next delivery time.
 * - DELIVERED, FAILED (in the DLQ), CANCELED: how it ended (a row HELD for its callbacks shows how it ended).
 */
export const MESSAGE_LIST_STATES = [
  "CREATED",
  "DELAYED",
  "QUEUED",
  "FLOW_CONTROL",
  "ACTIVE",
  "RETRY",
  "DELIVERED",
  "FAILED",
  "CANCELED",
] as const;

export type MessageListState = (typeof MESSAGE_LIST_STATES)[number];

/** How a message ended: the list's last three states. */
const ENDED_LIST_STATES: readonly MessageListState[] = ["DELIVERED", "FAILED", "CANCELED"];

/** The states a cancel still reaches (a live message): bulk cancel in the console lists exactly these. */
export const CANCELLABLE_LIST_STATES: readonly MessageListState[] = MESSAGE_LIST_STATES.filter(
  (s) => !ENDED_LIST_STATES.includes(s),
);

export function isMessageListState(s: string): s is MessageListState {
  return (MESSAGE_LIST_STATES as readonly string[]).includes(s);
}

/** The list state of a row: its row state, outcome and due time, at `now`. */
export function messageListState(row: { state: string; outcome?: string; dueAt: number }, now: number): MessageListState {
  switch (row.state) {
    case "CREATED":
      return row.dueAt > now ? "DELAYED" : "CREATED";
    case "WAITING":
      return "FLOW_CONTROL";
    case "HELD":
      // Finished; holding its queue slot until its callbacks finish: it shows how it ended.
      return row.outcome === "FAILED" ? "FAILED" : row.outcome === "CANCELED" ? "CANCELED" : "DELIVERED";
    case "QUEUED":
    case "ACTIVE":
    case "RETRY":
    case "DELIVERED":
    case "FAILED":
    case "CANCELED":
      return row.state;
    default:
      return "CREATED";
  }
}
