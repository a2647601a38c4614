import { createdLogEntry, type LogEntry, logEntry } from "./log.js";
import type { Message, NewMessage } from "./message.js";

/**
 * What inserting one message writes (docs/states.md), once for both storage adapters: the row's state and lease,
 * its log entries and its usage. The adapters (src/store/sqlite/messages.ts, src/store/postgres/messages.ts) find
 * out what the plan depends on, each its own way (a live deduplication key; whether the publish fast path has room,
 * src/domain/flow-claim.ts `fastPathRoom`), write what it says, and let their queue code promote queue messages that
 * got a free slot (src/domain/queue-slots.ts) in the same transaction.
 */

/** One message to insert; `leaseOwner`/`leaseUntil` ask for the publish fast path (inserted already leased). */
export interface InsertRequest {
  message: NewMessage;
  leaseOwner?: string;
  leaseUntil?: number;
}

export interface InsertPlan {
  /** The message as stored and returned: ACTIVE and leased when the fast path took it, else as built. */
  message: Message;
  leaseOwner: string | null;
  leaseUntil: number | null;
  /**
   * The entries to write: none when the row derives its log (its CREATED and first ACTIVE entries are read from the
   * row); else CREATED, and ACTIVE when it starts at once.
   */
  logs: LogEntry[];
  /** The `requests` usage it counts: one request of the body's size. */
  usage: { accountId: string; count: number; bytes: number };
}

/**
 * Whether a message's row derives its CREATED, first ACTIVE and DELIVERED entries (docs/states.md "The message row").
 * Not with Svc-Redact-Fields: the row keeps what is delivered, unredacted, and is kept after delivery, so such a
 * message writes its redacted CREATED entry out and its row leaves the table when it ends, as before migration 060.
 */
export const derivesLog = (m: Pick<NewMessage, "spec">): boolean => m.spec.redact === undefined;

/** Whether to ask the fast path's gate at all: only for an item the publishing node wants to deliver at once. */
export const wantsFastPath = (item: InsertRequest): boolean => item.leaseOwner !== undefined;

/** A deduplication key still alive at `now` makes the insert a duplicate of the message that holds it. */
export const dedupKeyLive = (expiresAt: number, now: number): boolean => expiresAt > now;

/**
 * The message as stored: a copy of `m` in `state`, not cancel-requested. Written out field by field, not as
 * `{ ...m, state, cancelRequested: false }`: V8 builds a spread followed by more properties on a slow path, and the
 * properties the plan adds after it (lease, `derivedLog`, `firstLeasedAt`) made each copy cost some 6 µs in a loop
 * and left an object every later reader (the INSERT's values, the dispatcher) paid for; this costs tens of ns
 * (docs/threading.md "The P1 path now"). An optional field is copied only when present, so it stays absent, as with
 * the spread; test/unit/insert-plan.test.ts fails when a field of `NewMessage` is not copied.
 */
export function storedMessage(m: NewMessage, state: Message["state"]): Message {
  const s: Message = {
    id: m.id,
    accountId: m.accountId,
    kind: m.kind,
    state,
    url: m.url,
    body: m.body,
    spec: m.spec,
    createdAt: m.createdAt,
    notBefore: m.notBefore,
    dueAt: m.dueAt,
    retried: m.retried,
    cancelRequested: false,
  };
  if (m.parentId !== undefined) s.parentId = m.parentId;
  if (m.topicName !== undefined) s.topicName = m.topicName;
  if (m.endpointName !== undefined) s.endpointName = m.endpointName;
  if (m.queueName !== undefined) s.queueName = m.queueName;
  if (m.scheduleId !== undefined) s.scheduleId = m.scheduleId;
  if (m.callerIp !== undefined) s.callerIp = m.callerIp;
  if (m.dedupId !== undefined) s.dedupId = m.dedupId;
  return s;
}

/**
 * The plan of one insert. `fastPath`: the gate let it through (never for a keyed message or an account at its
 * global bound); such a message is stored ACTIVE, leased to the publishing node, and logs its start at once.
 * Otherwise it is stored as built (CREATED, or QUEUED behind its FIFO queue) and waits for a claim.
 */
export function planInsert(item: InsertRequest, fastPath: boolean, now: number): InsertPlan {
  const m = item.message;
  const leased = fastPath && wantsFastPath(item);
  const message = storedMessage(m, leased ? "ACTIVE" : m.state);
  const derived = derivesLog(m);
  if (derived) message.derivedLog = true;
  if (leased) {
    message.leaseOwner = item.leaseOwner!;
    message.leaseUntil = item.leaseUntil!;
    if (derived) message.firstLeasedAt = now;
  }
  const logs: LogEntry[] = [];
  if (!derived) {
    logs.push(createdLogEntry(message, now));
    if (leased) logs.push(logEntry(message, "ACTIVE", now));
  }
  return {
    message,
    leaseOwner: leased ? item.leaseOwner! : null,
    leaseUntil: leased ? item.leaseUntil! : null,
    logs,
    usage: { accountId: m.accountId, count: 1, bytes: m.body?.length ?? 0 },
  };
}
