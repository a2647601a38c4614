import { messageListState } from "../../domain/message-list-state.js";
import type { MessageRowRecord } from "../../store/message-row-store.js";
import type { MessageListEntry, MessageListPage } from "../schemas/message-list.js";
import { putPresent } from "./put-present.js";

const ENDED = new Set(["DELIVERED", "FAILED", "CANCELED"]);

/**
 * One entry of `GET /v2/messages` (docs/messaging.md "Listing messages"): a message's current state and what an
 * operator scans a list for, never its body (open `GET /v2/logs?messageId=` or `GET /v2/messages/{id}` for that).
 */
export function messageListEntry(r: MessageRowRecord, now: number): MessageListEntry {
  const state = messageListState(r, now);
  const out: MessageListEntry = { messageId: r.id, state, url: r.url, attempts: r.attempts, createdAt: r.createdAt, bodySize: r.bodySize };
  // What a waiting message waits for (flow control: its key's limits, or the account's global parallelism).
  if (state === "FLOW_CONTROL") out.waitReason = r.waitReason === "global" ? "globalParallelism" : "flowControlKey";
  if (state === "RETRY" || state === "DELAYED" || state === "CREATED") out.nextDeliveryTime = r.dueAt;
  putPresent(out, "lastResponseStatus", r.lastStatus);
  // Only while it lives: an attempt that was under way when the cancel came decides how it ends (docs/states.md).
  if (r.cancelRequested && !ENDED.has(state)) out.cancelRequested = true;
  putPresent(out, "topicName", r.topicName);
  putPresent(out, "endpointName", r.endpointName);
  putPresent(out, "queueName", r.queueName);
  putPresent(out, "scheduleId", r.scheduleId);
  putPresent(out, "flowControlKey", r.flowKey);
  putPresent(out, "labels", r.labels);
  putPresent(out, "callerIP", r.callerIp);
  if (r.kind !== "message") out.kind = r.kind === "callback" ? "callback" : "failureCallback";
  putPresent(out, "parentMessageId", r.parentId);
  putPresent(out, "firstAttemptAt", r.firstLeasedAt);
  putPresent(out, "finishedAt", r.finishedAt);
  return out;
}

/** A page of `GET /v2/messages`: `cursor` only when there is a next page. */
export function messageListPage(entries: MessageListEntry[], cursor: string | undefined): MessageListPage {
  return cursor === undefined ? { messages: entries } : { messages: entries, cursor };
}
