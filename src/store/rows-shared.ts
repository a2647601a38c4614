import type { FilterColumns, LogDetails, LogEntry } from "../domain/log.js";
import { boundedMemo } from "../domain/bounded-memo.js";
import type { Message, MessageKind, MessageSpec, MessageState } from "../domain/message.js";
import type { FlowKeyState } from "../domain/flow-window.js";
import type { PlanName } from "../domain/plans.js";
import type { Schedule } from "../domain/schedule.js";
import type { SearchIndex, SearchRegion, SearchType } from "../domain/search.js";
import type { FlowKeyRecord } from "./flow-control-store.js";
import type { Customer } from "../domain/records.js";
import type { Queue } from "./queue-store.js";
import type { DlqEntry } from "../domain/records.js";
import type { Account } from "../domain/records.js";

/**
 * Row mapping both adapters share: their tables have the same columns, and BIGINTs come back as numbers from both.
 * Flags are 0/1 in SQLite and booleans in PostgreSQL, so each row type takes the flag type as a parameter and the
 * mappers normalise it with Boolean(). What differs between the adapters is how they write rows.
 */

/** Labels are stored as ",a,b," so that one LIKE finds a label. */
export const joinLabels = (labels: string[] | undefined): string | null =>
  labels && labels.length > 0 ? `,${labels.join(",")},` : null;

/** The columns of `FilterColumns` (domain/log.ts) as the log and message tables store them. */
export interface FilterColumnsRow {
  url: string;
  topic_name: string | null;
  endpoint_name: string | null;
  queue_name: string | null;
  schedule_id: string | null;
  caller_ip: string | null;
  labels: string | null;
  flow_key: string | null;
}

/** Sets on `into` the optional filter columns that `r` holds (a NULL column stays absent); `url` is the caller's. */
export function filterColumnsFromRow(r: FilterColumnsRow, into: FilterColumns): void {
  if (r.topic_name !== null) into.topicName = r.topic_name;
  if (r.endpoint_name !== null) into.endpointName = r.endpoint_name;
  if (r.queue_name !== null) into.queueName = r.queue_name;
  if (r.schedule_id !== null) into.scheduleId = r.schedule_id;
  if (r.caller_ip !== null) into.callerIp = r.caller_ip;
  if (r.labels !== null) into.labels = r.labels.split(",").filter((l) => l !== "");
  if (r.flow_key !== null) into.flowKey = r.flow_key;
}

export interface LogRow extends FilterColumnsRow {
  seq: number;
  account_id: string;
  message_id: string;
  state: string;
  time: number;
  details: string;
}

export function logFromRow(r: LogRow): LogEntry & { seq: string } {
  const e: LogEntry & { seq: string } = {
    seq: String(r.seq),
    accountId: r.account_id,
    messageId: r.message_id,
    state: r.state as LogEntry["state"],
    time: r.time,
    url: r.url,
    details: JSON.parse(r.details) as LogDetails,
  };
  filterColumnsFromRow(r, e);
  return e;
}

/** An `accounts` row; flags are 0/1 in SQLite and booleans in PostgreSQL. */
export interface AccountRow<Flag extends number | boolean = number | boolean> {
  id: string;
  customer_id: string;
  token: string;
  read_only_token: string | null;
  password: string;
  current_signing_key: string;
  next_signing_key: string;
  plan: string;
  state: string;
  active: Flag;
  created_at: number;
  modifying_state: string | null;
  last_plan_upgrade_time: number;
  reserved_price: number;
  prod_pack_enabled: Flag;
  prometheus_enabled: Flag;
  enterprise_id: string | null;
  region: string;
  budget: number;
  created_by: string;
}

export function accountFromRow(r: AccountRow): Account {
  const a: Account = {
    id: r.id,
    customerId: r.customer_id,
    token: r.token,
    password: r.password,
    currentSigningKey: r.current_signing_key,
    nextSigningKey: r.next_signing_key,
    plan: r.plan as PlanName,
    state: r.state,
    active: Boolean(r.active),
    createdAt: r.created_at,
    lastPlanUpgradeTime: r.last_plan_upgrade_time,
    reservedPrice: r.reserved_price,
    prodPackEnabled: Boolean(r.prod_pack_enabled),
    prometheusEnabled: Boolean(r.prometheus_enabled),
    region: r.region,
    budget: r.budget,
    createdBy: r.created_by,
  };
  if (r.read_only_token !== null) a.readOnlyToken = r.read_only_token;
  if (r.modifying_state !== null) a.modifyingState = r.modifying_state;
  if (r.enterprise_id !== null) a.enterpriseId = r.enterprise_id;
  return a;
}

/** A `messages` row; the flag is 0/1 in SQLite and a boolean in PostgreSQL (BIGINTs parsed to numbers by both). */
export interface MessageRow<Flag extends number | boolean = number | boolean> {
  seq: number;
  id: string;
  account_id: string;
  kind: string;
  parent_id: string | null;
  state: string;
  due_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  cancel_requested: Flag;
  url: string;
  body: Buffer | null;
  spec: string;
  created_at: number;
  not_before: number;
  retried: number;
  topic_name: string | null;
  endpoint_name: string | null;
  queue_name: string | null;
  schedule_id: string | null;
  caller_ip: string | null;
  labels: string | null;
  flow_key: string | null;
  dedup_id: string | null;
  /** Migration 060 (docs/states.md "The message row"); absent in rows built from a DLQ entry. */
  derived_log?: Flag;
  first_leased_at?: number | null;
}

export function messageFromRow(r: MessageRow): Message {
  const m: Message = {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind as MessageKind,
    state: r.state as MessageState,
    url: r.url,
    body: r.body ?? undefined,
    spec: JSON.parse(r.spec) as MessageSpec,
    createdAt: r.created_at,
    notBefore: r.not_before,
    dueAt: r.due_at,
    retried: r.retried,
    cancelRequested: Boolean(r.cancel_requested),
  };
  if (r.parent_id !== null) m.parentId = r.parent_id;
  if (r.topic_name !== null) m.topicName = r.topic_name;
  if (r.endpoint_name !== null) m.endpointName = r.endpoint_name;
  if (r.queue_name !== null) m.queueName = r.queue_name;
  if (r.schedule_id !== null) m.scheduleId = r.schedule_id;
  if (r.caller_ip !== null) m.callerIp = r.caller_ip;
  if (r.dedup_id !== null) m.dedupId = r.dedup_id;
  if (r.lease_owner !== null) m.leaseOwner = r.lease_owner;
  if (r.lease_until !== null) m.leaseUntil = r.lease_until;
  if (r.derived_log) m.derivedLog = true;
  if (r.first_leased_at !== undefined && r.first_leased_at !== null) m.firstLeasedAt = r.first_leased_at;
  return m;
}

/** The message as a claim hands it out: ACTIVE, leased to `owner` until `leaseUntil` (its row was just updated so). */
export function leasedTo(m: Message, owner: string, leaseUntil: number): Message {
  m.state = "ACTIVE";
  m.leaseOwner = owner;
  m.leaseUntil = leaseUntil;
  return m;
}

/** A `dlq` row (migration 001 of both adapters): the message's columns (no lease or due state) plus the response. */
export type DlqRow = Omit<
  MessageRow,
  "id" | "state" | "due_at" | "lease_owner" | "lease_until" | "cancel_requested" | "dedup_id"
> & {
  dlq_id: string;
  message_id: string;
  failed_at: number;
  response_status: number | null;
  response_headers: string;
  response_body: Buffer | null;
  error: string | null;
};

export function dlqEntryFromRow(r: DlqRow): DlqEntry {
  // A DLQ entry is not in the hot table: state and due time carry no meaning; CREATED is a neutral placeholder.
  const message = messageFromRow({
    ...r,
    id: r.message_id,
    state: "CREATED",
    due_at: r.failed_at,
    lease_owner: null,
    lease_until: null,
    cancel_requested: false,
    dedup_id: null,
  });
  const entry: DlqEntry = {
    dlqId: r.dlq_id,
    message,
    failedAt: r.failed_at,
    response: {
      headers: JSON.parse(r.response_headers) as Record<string, string[]>,
      body: r.response_body ?? Buffer.alloc(0),
    },
  };
  if (r.response_status !== null) entry.response.status = r.response_status;
  if (r.error !== null) entry.response.error = r.error;
  const seq = (r as { seq?: number | string }).seq;
  if (seq !== undefined) entry.seq = String(seq);
  return entry;
}

/** A `schedules` row; `paused` is 0/1 in SQLite and a boolean in PostgreSQL. */
export interface ScheduleRow<Flag extends number | boolean = number | boolean> {
  account_id: string;
  id: string;
  revision: string;
  destination: string;
  cron: string;
  spec: string;
  body: Buffer | null;
  delay_ms: number;
  queue_name: string | null;
  caller_ip: string | null;
  paused: Flag;
  created_at: number;
  next_run_at: number | null;
  last_run_at: number | null;
  last_message_ids: string;
  error: string | null;
}

export function scheduleFromRow(r: ScheduleRow): Schedule {
  const s: Schedule = {
    id: r.id,
    accountId: r.account_id,
    destination: r.destination,
    cron: r.cron,
    spec: JSON.parse(r.spec) as MessageSpec,
    delayMs: r.delay_ms,
    paused: Boolean(r.paused),
    createdAt: r.created_at,
    lastMessageIds: JSON.parse(r.last_message_ids) as string[],
    revision: r.revision,
  };
  if (r.body !== null) s.body = r.body;
  if (r.queue_name !== null) s.queueName = r.queue_name;
  if (r.caller_ip !== null) s.callerIp = r.caller_ip;
  if (r.next_run_at !== null) s.nextRunAt = r.next_run_at;
  if (r.last_run_at !== null) s.lastRunAt = r.last_run_at;
  if (r.error !== null) s.error = r.error;
  return s;
}

/** A `customers` row (migration 006 of both adapters). */
export interface CustomerRow {
  email: string;
  api_key_hash: string;
  created_at: number;
}

export const customerFromRow = (r: CustomerRow): Customer => ({
  email: r.email,
  apiKeyHash: r.api_key_hash,
  createdAt: r.created_at,
});

/** A `search_indexes` row; the flag is 0/1 in SQLite and a boolean in PostgreSQL. */
export interface SearchIndexRow<Flag extends number | boolean = number | boolean> {
  id: string;
  customer_id: string;
  name: string;
  endpoint: string;
  type: string;
  region: string;
  partner_email: string;
  token: string;
  read_only_token: string;
  input_enrichment_enabled: Flag;
  creation_time: number;
}

export const searchIndexFromRow = (r: SearchIndexRow): SearchIndex => ({
  id: r.id,
  customerId: r.customer_id,
  name: r.name,
  endpoint: r.endpoint,
  type: r.type as SearchType,
  region: r.region as SearchRegion,
  partnerEmail: r.partner_email,
  token: r.token,
  readOnlyToken: r.read_only_token,
  inputEnrichmentEnabled: Boolean(r.input_enrichment_enabled),
  creationTime: r.creation_time,
});

/** A `flow_keys` row (migration 005 of both adapters); flags are 0/1 in SQLite and booleans in PostgreSQL. */
export interface FlowKeyRow<Flag extends number | boolean = number | boolean> {
  account_id: string;
  key: string;
  parallelism: number | null;
  rate: number | null;
  period_sec: number;
  rate_count: number;
  period_start: number;
  paused: Flag;
  pinned_parallelism: Flag;
  pinned_rate: Flag;
  wake_at: number | null;
  created_at: number;
}

/** What the claim's rules (domain/flow-window.ts) need of a key. */
export function flowKeyStateOf(r: FlowKeyRow): FlowKeyState {
  const s: FlowKeyState = {
    periodSec: r.period_sec,
    rateCount: r.rate_count,
    periodStart: r.period_start,
    paused: Boolean(r.paused),
  };
  if (r.parallelism !== null) s.parallelism = r.parallelism;
  if (r.rate !== null) s.rate = r.rate;
  return s;
}

/** A key for the management API, with its deliveries in flight and its wait list size. */
export function flowKeyRecordOf(r: FlowKeyRow, parallelismCount: number, waitListSize: number): FlowKeyRecord {
  return {
    accountId: r.account_id,
    key: r.key,
    ...flowKeyStateOf(r),
    pinnedParallelism: Boolean(r.pinned_parallelism),
    pinnedRate: Boolean(r.pinned_rate),
    createdAt: r.created_at,
    parallelismCount,
    waitListSize,
  };
}

/** A `queues` row with its lag counted (both adapters' queue reads); `paused` is 0/1 or a boolean. */
export interface QueueRow<Flag extends number | boolean = number | boolean> {
  name: string;
  parallelism: number;
  paused: Flag;
  created_at: number;
  updated_at: number;
  lag: number;
}

export const queueFromRow = (r: QueueRow): Queue => ({
  name: r.name,
  parallelism: r.parallelism,
  paused: Boolean(r.paused),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lag: r.lag,
});

const urlParts = boundedMemo(parseUrlParts);

/**
 * Host or path of a URL, which the URL filters of the logs and the DLQ match (`url_host()`/`url_path()` in SQLite,
 * columns stored at insert in PostgreSQL); null for a string that is not a URL. PostgreSQL stores both for the message
 * row and each of its log entries, eight parses per message without the memo (1% of a pg1 node's CPU): a message and
 * its log entries share one URL, and most accounts have few destinations.
 */
export function urlPart(url: string, part: "host" | "path"): string | null {
  return urlParts(url)[part];
}

function parseUrlParts(url: string): { host: string | null; path: string | null } {
  try {
    const u = new URL(url);
    return { host: u.hostname, path: u.pathname };
  } catch {
    return { host: null, path: null };
  }
}
