import type { SearchIndex } from "../domain/search.js";
import type { Account, Customer } from "../domain/records.js";
import type { UsageMetric } from "./store-params.js";

export type { Customer } from "../domain/records.js";

/** Usage of one metric summed over one bucket of `usageBuckets` (bucket = index from `from` in `stepMs`). */
export interface UsageBucket {
  bucket: number;
  metric: UsageMetric;
  count: number;
  bytes: number;
}

/**
 * Storage of the management capability (docs/management.md "Storage"): customers, search indexes, usage read-outs
 * and the daily request quota. Merged into `Store`; every method keeps to one params object and takes `now`/days
 * explicitly.
 */
export interface ManagementStore {
  /** Inserts a customer, and its first messaging account when given, in one transaction; false if the e-mail exists. */
  customerInsert(p: { customer: Customer; account?: Account }): Promise<boolean>;
  customerGet(p: { email: string }): Promise<Customer | undefined>;
  /** The first customer ever created: the operator (FERRY_ADMIN_EMAIL). */
  customerFirst(): Promise<Customer | undefined>;
  /** Changes the key hash and/or the e-mail; a new e-mail moves the customer's accounts and indexes with it. */
  customerUpdate(p: { email: string; patch: { email?: string; apiKeyHash?: string } }): Promise<Customer>;

  /** The customer's messaging accounts, oldest first. */
  accountListByCustomer(p: { customerId: string }): Promise<Account[]>;
  /** Entries in the account's dead letter queue. */
  accountDlqCount(p: { accountId: string }): Promise<number>;

  /** Per-metric sums of the per-minute usage counters in `count` buckets of `stepMs` starting at `from`. */
  usageBuckets(p: { accountId: string; from: number; stepMs: number; count: number }): Promise<UsageBucket[]>;
  /**
   * Atomically adds `n` publish-type requests to the account's counter of the UTC day starting at `day`, unless
   * that would pass `limit`. Returns whether they were counted and the day's count afterwards (before, if refused).
   */
  quotaConsume(p: { accountId: string; day: number; n: number; limit: number }): Promise<{
    allowed: boolean;
    used: number;
  }>;

  searchIndexInsert(p: { index: SearchIndex }): Promise<void>;
  searchIndexGet(p: { customerId: string; id: string }): Promise<SearchIndex | undefined>;
  searchIndexList(p: { customerId: string }): Promise<SearchIndex[]>;
  /** Undefined when the index does not exist or belongs to another customer. */
  searchIndexUpdate(p: {
    customerId: string;
    id: string;
    patch: Partial<Pick<SearchIndex, "name" | "token" | "readOnlyToken">>;
  }): Promise<SearchIndex | undefined>;
  searchIndexDelete(p: { customerId: string; id: string }): Promise<boolean>;
}
