import { AppError, notFound } from "../errors.js";
import { messageIdTime } from "../domain/ids.js";
import type { Account, DlqEntry } from "../domain/records.js";
import type { ReplayRecord, StoredMessage } from "../store/message-action-store.js";
import type { Services } from "./context.js";
import { retryDlq } from "./dlq.js";
import { enforceDailyQuota } from "./limits.js";
import { republishedMessage, type RetryOverrides } from "./republish.js";

/**
 * Retry and replay of one message, from where an operator looks at it (docs/messaging.md "Retry and replay"):
 * - **retry** a failed message: its DLQ entry is retried (a new message, as `POST /v2/dlq/retry/{dlqId}`);
 *   a message waiting out its retry backoff: its next attempt is made due now. Any other state is refused with
 *   what it is waiting for, and what to do instead.
 * - **replay**: a new message with the same request (destination, method, forwarded headers, body, options; due
 *   now, without its deduplication id), whose row records the message it replays.
 * What each action would do is decided here once; `GET /v2/messages/{id}/actions` shows it, the POSTs apply it.
 */

/** How many replays of one message its page lists. (Default: 20) */
const REPLAYS_SHOWN = 20;

export type RetryPlan =
  | { allowed: true; kind: "dlq"; dlqId: string }
  | { allowed: true; kind: "deliverNow"; dueAt: number }
  | { allowed: false; reason: string };

export type ReplayPlan = { allowed: true } | { allowed: false; reason: string };

export interface MessageActions {
  messageId: string;
  /** The row's state when it is still kept (docs/states.md "The message row"). */
  state?: string;
  retry: RetryPlan;
  replay: ReplayPlan;
  replayOf?: string;
  replays: ReplayRecord[];
}

/** What is known of a message: its row, its DLQ entry, and, when neither is kept, why. */
interface Located {
  stored?: StoredMessage;
  dlq?: DlqEntry;
  /** Neither row nor entry: the refusal to answer (404 unknown, 410 not kept). */
  missing?: AppError;
  /** Missing, but its log knows it: the account's own message, whose request is no longer kept. */
  logged?: boolean;
}

async function locate(services: Services, account: Account, id: string): Promise<Located> {
  const accountId = account.id;
  const [stored, page] = await Promise.all([
    services.store.messageStoredGet({ accountId, id }),
    services.store.dlqList({ accountId, filter: { messageIds: [id] }, count: 1, order: "latestFirst" }),
  ]);
  const out: Located = {};
  if (stored) out.stored = stored;
  if (page.entries[0]) out.dlq = page.entries[0];
  if (!out.stored && !out.dlq) Object.assign(out, await whyMissing(services, account, id));
  return out;
}

/** Neither row nor DLQ entry: known from its log (not kept), older than the retention (gone), or unknown. */
async function whyMissing(
  services: Services,
  account: Account,
  id: string,
): Promise<{ missing: AppError; logged: boolean }> {
  const logs = await services.store.logList({
    accountId: account.id,
    filter: { messageIds: [id] },
    count: 1,
    order: "latestFirst",
  });
  if (logs.logs.length > 0) {
    const missing = new AppError(
      "gone",
      `message ${id} ended and its request is no longer kept (a message published with Redact-Fields keeps only its log)`,
    );
    return { missing, logged: true };
  }
  const created = messageIdTime(id);
  const retentionMs = services.config.logRetentionMs;
  if (created !== undefined && created < services.clock.now() - retentionMs) {
    const missing = new AppError(
      "gone",
      `message ${id} is older than the log retention (FERRY_LOG_RETENTION_MS, ${span(retentionMs)}): its body and request are no longer kept`,
    );
    return { missing, logged: false };
  }
  return { missing: notFound(`message ${id}`), logged: false };
}

/** A retention as words: `14 days`, `6 h`, `1 min`. */
function span(ms: number): string {
  if (ms >= DAY_MS && ms % DAY_MS === 0) return ms === DAY_MS ? "1 day" : `${ms / DAY_MS} days`;
  if (ms >= 3_600_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 60_000)} min`;
}

const DAY_MS = 86_400_000;

/** Why a kept message in this state cannot be retried, and what to do instead. */
function notRetryable(stored: StoredMessage, now: number): string {
  const m = stored.message;
  switch (stored.state) {
    case "DELIVERED":
      return "it was delivered; replay it to send it again";
    case "CANCELED":
      return "it was cancelled; replay it to send it again";
    case "FAILED":
      return "its DLQ entry is gone (retried, deleted or past the DLQ retention); replay it instead";
    case "HELD":
      return "it has ended; its queue slot is held until its callbacks finish";
    case "ACTIVE":
      return "an attempt is in progress";
    case "QUEUED":
      return `it waits for its turn in queue ${m.queueName ?? ""}`.trim();
    case "WAITING":
      return `it waits for flow control${m.spec.flowControl ? ` (key ${m.spec.flowControl.key})` : ""}`;
    case "CREATED":
      return m.dueAt > now
        ? `it has not been attempted yet: it waits for its delay until ${new Date(m.dueAt).toISOString()}`
        : "it has not been attempted yet: its first attempt is due now";
    default:
      return `it is ${stored.state}`;
  }
}

function retryPlan(found: Located, now: number): RetryPlan {
  if (found.dlq) return { allowed: true, kind: "dlq", dlqId: found.dlq.dlqId };
  const stored = found.stored;
  if (!stored) return { allowed: false, reason: found.missing!.message };
  // A RETRY row already due is about to be claimed: bringing it forward changes nothing.
  if (stored.state === "RETRY" && stored.message.dueAt > now) {
    return { allowed: true, kind: "deliverNow", dueAt: stored.message.dueAt };
  }
  if (stored.state === "RETRY") return { allowed: false, reason: "its next attempt is due now" };
  return { allowed: false, reason: notRetryable(stored, now) };
}

function replayPlan(found: Located): ReplayPlan {
  const source = found.stored?.message ?? found.dlq?.message;
  if (!source) return { allowed: false, reason: found.missing!.message };
  const run = source.spec.workflow?.runId;
  if (run !== undefined) {
    return {
      allowed: false,
      reason: `it is a step of workflow run ${run}: resume or restart the run from the workflow DLQ instead`,
    };
  }
  return { allowed: true };
}

/**
 * What retry and replay would do for this message, and its replay links (`GET /v2/messages/{id}/actions`). A
 * message only its log still knows answers with both refused, saying why; an unknown one is a 404 (or a 410 past
 * the retention), like the POSTs.
 */
export async function messageActions(services: Services, account: Account, id: string): Promise<MessageActions> {
  const found = await locate(services, account, id);
  if (found.missing && !found.logged) throw found.missing;
  const now = services.clock.now();
  const out: MessageActions = {
    messageId: id,
    retry: retryPlan(found, now),
    replay: replayPlan(found),
    replays: await services.store.messageReplayList({ accountId: account.id, id, limit: REPLAYS_SHOWN }),
  };
  if (found.stored) out.state = found.stored.state;
  if (found.stored?.replayOf !== undefined) out.replayOf = found.stored.replayOf;
  return out;
}

export type RetryOutcome =
  | { kind: "dlq"; dlqId: string; messageId: string; deduplicated: boolean }
  | { kind: "deliverNow"; messageId: string };

/** Retries one message (see the top of this file); refuses with 404, 409 or 410 saying why. */
export async function retryMessage(
  services: Services,
  account: Account,
  id: string,
  overrides: RetryOverrides,
): Promise<RetryOutcome> {
  const found = await locate(services, account, id);
  if (found.missing) throw found.missing;
  const now = services.clock.now();
  const plan = retryPlan(found, now);
  if (!plan.allowed) throw new AppError("conflict", `message ${id} cannot be retried: ${plan.reason}`);
  if (plan.kind === "dlq") {
    const r = await retryDlq(services, account, plan.dlqId, overrides);
    return { kind: "dlq", dlqId: plan.dlqId, messageId: r.messageId, deduplicated: r.deduplicated };
  }
  if (!(await services.store.messageRetryNow({ accountId: account.id, id, now }))) {
    // Claimed, cancelled or ended between the read and the write.
    throw new AppError("conflict", `message ${id} cannot be retried: it is no longer waiting for its next retry`);
  }
  services.dispatcher.nudge();
  return { kind: "deliverNow", messageId: id };
}

/** Replays one message: a new message with its request, linked to it; refuses with 404, 409 or 410 saying why. */
export async function replayMessage(
  services: Services,
  account: Account,
  id: string,
  overrides: RetryOverrides,
): Promise<{ messageId: string }> {
  const found = await locate(services, account, id);
  if (found.missing) throw found.missing;
  const plan = replayPlan(found);
  if (!plan.allowed) throw new AppError("conflict", `message ${id} cannot be replayed: ${plan.reason}`);
  // A replay is a publish: it counts against the daily quota like one (docs/messaging.md "Limits").
  await enforceDailyQuota(services, account, 1);
  const now = services.clock.now();
  const source = (found.stored?.message ?? found.dlq?.message)!;
  // Not the original's schedule: a replay is not one of its ticks (docs/messaging.md "Retry and replay").
  const message = republishedMessage(services, account, source, overrides, now, { keepSchedule: false });
  const result = await services.store.messageReplayInsert({
    item: { message },
    replayOf: id,
    now,
    dedupWindowMs: services.config.dedupWindowMs,
  });
  if (result.message && result.message.dueAt > now) services.dispatcher.noteDue(result.message.dueAt);
  else services.dispatcher.nudge();
  return { messageId: result.messageId };
}
