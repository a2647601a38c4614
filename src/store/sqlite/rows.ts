import {
  accountFromRow,
  type AccountRow as SharedAccountRow,
  joinLabels,
  type LogRow,
  logFromRow,
} from "../rows-shared.js";
import type { LogEntry } from "../../domain/log.js";
import type { Message, MessageKind, MessageSpec, MessageState, NewMessage } from "../../domain/message.js";
import type { Account } from "../store.js";

/** Column values of a `messages` row, as better-sqlite3 returns them. */
export interface MessageRow {
  seq: number;
  id: string;
  account_id: string;
  kind: string;
  parent_id: string | null;
  state: string;
  due_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  cancel_requested: number;
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
    cancelRequested: r.cancel_requested === 1,
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

/** Named parameters for inserting a message row (the column list lives in messages.ts). */
export function messageParams(m: NewMessage, leaseOwner: string | null, leaseUntil: number | null) {
  return {
    id: m.id,
    account_id: m.accountId,
    kind: m.kind,
    parent_id: m.parentId ?? null,
    state: m.state,
    due_at: m.dueAt,
    lease_owner: leaseOwner,
    lease_until: leaseUntil,
    url: m.url,
    body: m.body ?? null,
    spec: JSON.stringify(m.spec),
    created_at: m.createdAt,
    not_before: m.notBefore,
    retried: m.retried,
    topic_name: m.topicName ?? null,
    endpoint_name: m.endpointName ?? null,
    queue_name: m.queueName ?? null,
    schedule_id: m.scheduleId ?? null,
    caller_ip: m.callerIp ?? null,
    labels: joinLabels(m.spec.labels),
    flow_key: m.spec.flowControl?.key ?? null,
    dedup_id: m.dedupId ?? null,
  };
}


export function logParams(e: LogEntry) {
  return {
    account_id: e.accountId,
    message_id: e.messageId,
    state: e.state,
    time: e.time,
    url: e.url,
    topic_name: e.topicName ?? null,
    endpoint_name: e.endpointName ?? null,
    queue_name: e.queueName ?? null,
    schedule_id: e.scheduleId ?? null,
    caller_ip: e.callerIp ?? null,
    labels: joinLabels(e.labels),
    flow_key: e.flowKey ?? null,
    details: JSON.stringify(e.details),
  };
}


export type AccountRow = SharedAccountRow<number>;

export const ACCOUNT_COLUMNS = [
  "id",
  "customer_id",
  "token",
  "password",
  "current_signing_key",
  "next_signing_key",
  "plan",
  "state",
  "active",
  "created_at",
  "modifying_state",
  "last_plan_upgrade_time",
  "reserved_price",
  "prod_pack_enabled",
  "prometheus_enabled",
  "enterprise_id",
  "region",
  "budget",
  "created_by",
] as const;


/** Named parameters for inserting an account row; management fields default as a fresh account's would. */
export function accountParams(a: Account): Record<(typeof ACCOUNT_COLUMNS)[number], string | number | null> {
  return {
    id: a.id,
    customer_id: a.customerId,
    token: a.token,
    password: a.password,
    current_signing_key: a.currentSigningKey,
    next_signing_key: a.nextSigningKey,
    plan: a.plan,
    state: a.state,
    active: a.active ? 1 : 0,
    created_at: a.createdAt,
    modifying_state: a.modifyingState ?? null,
    last_plan_upgrade_time: a.lastPlanUpgradeTime ?? 0,
    reserved_price: a.reservedPrice ?? 0,
    prod_pack_enabled: a.prodPackEnabled ? 1 : 0,
    prometheus_enabled: a.prometheusEnabled ? 1 : 0,
    enterprise_id: a.enterpriseId ?? null,
    region: a.region ?? "eu-central-1",
    budget: a.budget ?? 0,
    created_by: a.createdBy ?? "",
  };
}

export { accountFromRow, joinLabels, type LogRow, logFromRow };
