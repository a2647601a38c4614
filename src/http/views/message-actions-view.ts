import type {
  MessageActions as ActionsResult,
  ReplayPlan as ReplayDecision,
  RetryOutcome,
  RetryPlan as RetryDecision,
} from "../../services/message-actions.js";
import type {
  MessageActions,
  Replayed,
  ReplayPlan,
  RetriedFromDlq,
  RetriedNow,
  RetryPlan,
} from "../schemas/message-actions.js";

/** Retry's plan on the wire: what it would do, or why not (docs/messaging.md "Retry and replay"). */
function retryPlan(p: RetryDecision): RetryPlan {
  if (!p.allowed) return { allowed: false, reason: p.reason };
  return p.kind === "dlq"
    ? { allowed: true, kind: "dlq", dlqId: p.dlqId }
    : { allowed: true, kind: "deliverNow", dueAt: p.dueAt };
}

function replayPlan(p: ReplayDecision): ReplayPlan {
  return p.allowed ? { allowed: true } : { allowed: false, reason: p.reason };
}

/** `GET /v2/messages/{id}/actions`: `state` and `replayOf` only when known. */
export function messageActionsView(a: ActionsResult): MessageActions {
  const out: MessageActions = {
    messageId: a.messageId,
    retry: retryPlan(a.retry),
    replay: replayPlan(a.replay),
    replays: a.replays.map((r) => ({ messageId: r.messageId, createdAt: r.createdAt })),
  };
  if (a.state !== undefined) out.state = a.state;
  if (a.replayOf !== undefined) out.replayOf = a.replayOf;
  return out;
}

/** `POST /v2/messages/{id}/retry`, 200: the message waiting out its backoff is due now. */
export function retriedNow(messageId: string): RetriedNow {
  return { messageId, action: "deliverNow" };
}

/** `POST /v2/messages/{id}/retry`, 201: its DLQ entry was retried; `deduplicated` only for a duplicate. */
export function retriedFromDlq(r: Extract<RetryOutcome, { kind: "dlq" }>): RetriedFromDlq {
  const out: RetriedFromDlq = { messageId: r.messageId, action: "dlqRetry", dlqId: r.dlqId };
  if (r.deduplicated) out.deduplicated = true;
  return out;
}

/** `POST /v2/messages/{id}/replay`, 201: the new message and the one it replays. */
export function replayed(messageId: string, replayOf: string): Replayed {
  return { messageId, replayOf };
}
