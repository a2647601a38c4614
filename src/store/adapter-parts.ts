import type { ManagementStore } from "./management-store.js";
import type { Account, Store } from "./store.js";

/**
 * The parts of the Store interface each storage adapter implements in one file of its own (src/store/sqlite/*.ts,
 * src/store/postgres/*.ts), and what those parts share that is not SQL: named once here so that the two adapters
 * differ only in how they speak to their database.
 */

export type AccountQueries = Pick<
  Store,
  | "accountInsert"
  | "accountInsertDefault"
  | "accountUpdate"
  | "accountGet"
  | "accountGetByToken"
  | "accountFirst"
  | "accountRotateKeys"
>;

export type CustomerQueries = Pick<
  ManagementStore,
  "customerInsert" | "customerGet" | "customerFirst" | "customerUpdate" | "accountListByCustomer"
>;

export type SearchIndexQueries = Pick<
  ManagementStore,
  "searchIndexInsert" | "searchIndexGet" | "searchIndexList" | "searchIndexUpdate" | "searchIndexDelete"
>;

export type TopicQueries = Pick<
  Store,
  "topicAddEndpoints" | "topicRemoveEndpoints" | "topicGet" | "topicList" | "topicDelete" | "topicSetHeaders"
>;

export type QueueQueries = Pick<
  Store,
  "queueUpsert" | "queueEnsure" | "queueGet" | "queueList" | "queueDelete" | "queueSetPaused"
>;

export type MessageQueries = Pick<
  Store,
  | "messageInsertMany"
  | "messageGet"
  | "messageLeaseDue"
  | "messageRenewLeases"
  | "messageReleaseLeases"
  | "messageNextDueAt"
  | "messageFinish"
  | "messageCancel"
>;

/** Patchable account fields → columns. Values go in as parameters; only these names ever reach the SQL text. */
export const ACCOUNT_PATCH_COLUMNS: Record<string, string> = {
  token: "token",
  readOnlyToken: "read_only_token",
  password: "password",
  currentSigningKey: "current_signing_key",
  nextSigningKey: "next_signing_key",
  plan: "plan",
  state: "state",
  active: "active",
  customerId: "customer_id",
  modifyingState: "modifying_state",
  lastPlanUpgradeTime: "last_plan_upgrade_time",
  reservedPrice: "reserved_price",
  prodPackEnabled: "prod_pack_enabled",
  prometheusEnabled: "prometheus_enabled",
  budget: "budget",
};

/** Insert columns of an account, in the order of the values the adapters bind (`seq`, where kept, is generated). */
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

export type AccountColumn = (typeof ACCOUNT_COLUMNS)[number];

/** An account's values by insert column; management fields default as a fresh account's would. Flags as booleans. */
export function accountColumnValues(a: Account): Record<AccountColumn, string | number | boolean | null> {
  return {
    id: a.id,
    customer_id: a.customerId,
    token: a.token,
    password: a.password,
    current_signing_key: a.currentSigningKey,
    next_signing_key: a.nextSigningKey,
    plan: a.plan,
    state: a.state,
    active: a.active,
    created_at: a.createdAt,
    modifying_state: a.modifyingState ?? null,
    last_plan_upgrade_time: a.lastPlanUpgradeTime ?? 0,
    reserved_price: a.reservedPrice ?? 0,
    prod_pack_enabled: a.prodPackEnabled ?? false,
    prometheus_enabled: a.prometheusEnabled ?? false,
    enterprise_id: a.enterpriseId ?? null,
    region: a.region ?? "eu-central-1",
    budget: a.budget ?? 0,
    created_by: a.createdBy ?? "",
    read_only_token: a.readOnlyToken ?? null,
  };
}

/** Patchable search index fields → columns (the same guarantee). */
export const SEARCH_INDEX_PATCH_COLUMNS: Record<"name" | "token" | "readOnlyToken", string> = {
  name: "name",
  token: "token",
  readOnlyToken: "read_only_token",
};

/** A patch's fields that are set, as [column, value] pairs, in the patch's order. */
export function patchColumns(patch: object, columns: Record<string, string>): [string, unknown][] {
  return Object.entries(patch)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => [columns[k]!, v]);
}

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/**
 * An adapter's store methods, from the parts it implements (each `part(ctx)` returns some of the Store's methods).
 * The result's type is every part's methods together, so the adapter's index.ts is checked for a complete Store.
 */
export function combineParts<Ctx, Part extends (ctx: Ctx) => object>(
  ctx: Ctx,
  parts: readonly Part[],
): Intersection<ReturnType<Part>> {
  return Object.assign({}, ...parts.map((part) => part(ctx))) as Intersection<ReturnType<Part>>;
}
