import type { LogDetails, LogEntry } from "../domain/log.js";
import type { Message, MessageKind, MessageSpec, MessageState } from "../domain/message.js";
import type { PlanName } from "../domain/plans.js";
import type { Account } from "./store.js";

/**
 * Row mapping both adapters share: the `logs` table has the same columns and value types in SQLite and PostgreSQL.
 * The account and message mappers normalise the flags (0/1 in SQLite, booleans in PostgreSQL); what differs is how
 * each adapter writes rows.
 */

/** Labels are stored as ",a,b," so that one LIKE finds a label. */
export const joinLabels = (labels: string[] | undefined): string | null =>
  labels && labels.length > 0 ? `,${labels.join(",")},` : null;

export interface LogRow {
  seq: number;
  account_id: string;
  message_id: string;
  state: string;
  time: number;
  url: string;
  topic_name: string | null;
  endpoint_name: string | null;
  queue_name: string | null;
  schedule_id: string | null;
  caller_ip: string | null;
  labels: string | null;
  flow_key: string | null;
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
  if (r.topic_name !== null) e.topicName = r.topic_name;
  if (r.endpoint_name !== null) e.endpointName = r.endpoint_name;
  if (r.queue_name !== null) e.queueName = r.queue_name;
  if (r.schedule_id !== null) e.scheduleId = r.schedule_id;
  if (r.caller_ip !== null) e.callerIp = r.caller_ip;
  if (r.labels !== null) e.labels = r.labels.split(",").filter((l) => l !== "");
  if (r.flow_key !== null) e.flowKey = r.flow_key;
  return e;
}

/** An `accounts` row; flags are 0/1 in SQLite and booleans in PostgreSQL. */
export interface AccountRow<Flag extends number | boolean = number | boolean> {
  id: string;
  customer_id: string;
  token: string;
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
  return m;
}
