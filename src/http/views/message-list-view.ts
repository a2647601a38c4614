import { messageListState } from "../../domain/message-list-state.js";
import type { MessageRowRecord } from "../../store/message-row-store.js";
import { put } from "./message-view.js";

const ENDED = new Set(["DELIVERED", "FAILED", "CANCELED"]);

/**
 * One entry of `GET /v2/messages` (docs/messaging.md "Listing messages"): a message's current state and what an
 * operator scans a list for, never its body (open `GET /v2/logs?messageId=` or `GET /v2/messages/{id}` for that).
 */
export function messageListEntry(r: MessageRowRecord, now: number): Record<string, unknown> {
  const state = messageListState(r, now);
  const out: Record<string, unknown> = { messageId: r.id, state, url: r.url, attempts: r.attempts, createdAt: r.createdAt };
  // What a waiting message waits for (flow control: its key's limits, or the account's global parallelism).
  if (state === "FLOW_CONTROL") put(out, "waitReason", r.waitReason === "global" ? "globalParallelism" : "flowControlKey");
  if (state === "RETRY" || state === "DELAYED" || state === "CREATED") out.nextDeliveryTime = r.dueAt;
  put(out, "lastResponseStatus", r.lastStatus);
  // Only while it lives: an attempt that was under way when the cancel came decides how it ends (docs/states.md).
  if (r.cancelRequested && !ENDED.has(state)) out.cancelRequested = true;
  put(out, "topicName", r.topicName);
  put(out, "endpointName", r.endpointName);
  put(out, "queueName", r.queueName);
  put(out, "scheduleId", r.scheduleId);
  put(out, "flowControlKey", r.flowKey);
  put(out, "labels", r.labels);
  put(out, "callerIP", r.callerIp);
  if (r.kind !== "message") out.kind = r.kind === "callback" ? "callback" : "failureCallback";
  put(out, "parentMessageId", r.parentId);
  put(out, "firstAttemptAt", r.firstLeasedAt);
  put(out, "finishedAt", r.finishedAt);
  out.bodySize = r.bodySize;
  return out;
}
