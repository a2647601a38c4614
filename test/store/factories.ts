import { newMessageId } from "../../src/domain/ids.js";
import { logEntry } from "../../src/domain/log.js";
import type { FlowControl, Message, NewMessage } from "../../src/domain/message.js";
import type { SearchIndex } from "../../src/domain/search.js";
import type { Account, Store, UsageMetric } from "../../src/store/store.js";
import type { OpenedStore } from "./adapters.js";

/**
 * Builders shared by every store test (test/store/*.test.ts): an account and a message with every required field,
 * overridable in part. Times are explicit: the store never reads the clock for its rules.
 */
export const NOW = 1_800_000_000_000;

export function anAccount(id: string, over: Partial<Account> = {}): Account {
  return {
    id,
    customerId: "owner@test.local",
    token: `token-${id}`,
    password: `password-${id}`,
    currentSigningKey: `sig_current_${id}`,
    nextSigningKey: `sig_next_${id}`,
    plan: "paid",
    state: "active",
    active: true,
    createdAt: NOW,
    ...over,
  };
}

/** A message ready to publish: CREATED and due at its creation (QUEUED when it names a queue). */
/** A search index with every field, named `id`, its tokens derived from it. */
export function aSearchIndex(id: string, over: Partial<SearchIndex> = {}): SearchIndex {
  return {
    id,
    customerId: "owner@test.local",
    name: id,
    endpoint: `http://127.0.0.1:1/search/slug-${id}`,
    type: "payg",
    region: "eu-west-1",
    partnerEmail: "",
    token: `token-${id}`,
    readOnlyToken: `ro-${id}`,
    inputEnrichmentEnabled: false,
    creationTime: 1,
    ...over,
  };
}

export function aMessage(accountId: string, over: Partial<NewMessage> & { at?: number } = {}): NewMessage {
  const { at = NOW, ...rest } = over;
  return {
    id: newMessageId(at),
    accountId,
    kind: "message",
    state: rest.queueName !== undefined ? "QUEUED" : "CREATED",
    url: "http://127.0.0.1:9/x",
    body: undefined,
    spec: { method: "POST", headers: {}, retries: 0 },
    createdAt: at,
    notBefore: 0,
    dueAt: at,
    retried: 0,
    ...rest,
  };
}

/** A message of a flow-control key. */
export function aKeyedMessage(accountId: string, at: number, flowControl?: FlowControl): NewMessage {
  const m = aMessage(accountId, { at });
  if (flowControl) m.spec.flowControl = flowControl;
  return m;
}

/** Publishes the messages as one insert operation (no dedup), at `now` (default: the first message's creation). */
export const publish = (store: Store, messages: NewMessage[], now = messages[0]?.createdAt ?? NOW) =>
  store.messageInsertMany({ items: messages.map((message) => ({ message })), now, dedupWindowMs: 0 });

/** Ends a message leased to `owner` as delivered at `now`, with its DELIVERED entry; true when the lease held. */
export const finishDelivered = (store: Store, m: Message, owner: string, now: number) =>
  store.messageFinish({
    message: m,
    owner,
    now,
    outcome: { kind: "delivered" },
    logs: [logEntry(m, "DELIVERED", now)],
    newMessages: [],
  });

/**
 * Adds to an account's per-minute usage counter behind the store's back (raw SQL): the store only counts usage as a
 * side effect of the writes that cause it, which cannot produce arbitrary counts.
 */
export async function seedUsage(
  opened: Pick<OpenedStore, "sql" | "dialect">,
  u: { accountId: string; now: number; metric: UsageMetric; count: number; bytes: number },
): Promise<void> {
  // PostgreSQL keeps a row per writing connection (migration 066); these rows are writer 0's.
  const key = opened.dialect === "postgres" ? "account_id, minute, metric, writer" : "account_id, minute, metric";
  await opened.sql(
    `INSERT INTO usage (account_id, minute, metric, count, bytes) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (${key}) DO UPDATE SET count = usage.count + excluded.count,
       bytes = usage.bytes + excluded.bytes`,
    [u.accountId, u.now - (u.now % 60_000), u.metric, u.count, u.bytes],
  );
}
