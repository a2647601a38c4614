import {
  accountFromRow,
  type AccountRow as SharedAccountRow,
  joinLabels,
  type LogRow,
  logFromRow,
  messageFromRow,
  type MessageRow as SharedMessageRow,
} from "../rows-shared.js";
import type { LogEntry } from "../../domain/log.js";
import type { NewMessage } from "../../domain/message.js";
import type { Account } from "../store.js";

/** A `messages` row as better-sqlite3 returns it. */
export type MessageRow = SharedMessageRow<number>;
export { messageFromRow };

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
  "read_only_token",
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
    read_only_token: a.readOnlyToken ?? null,
  };
}

export { accountFromRow, joinLabels, type LogRow, logFromRow };
