/**
 * Search indexes (docs/management.md "Search indexes"). Ferry keeps their records and credentials; it does not run a
 * vector engine, so the limits below describe the plan an index is on. Reference values: pay-as-you-go comes from the
 * docs example; free and fixed were not published and are chosen to sit below and above it.
 */
export const searchTypes = ["free", "payg", "fixed"] as const;
export type SearchType = (typeof searchTypes)[number];

export const searchRegions = ["eu-west-1", "us-central1"] as const;
export type SearchRegion = (typeof searchRegions)[number];

export interface SearchIndex {
  id: string;
  /** Owner: the customer's e-mail. */
  customerId: string;
  name: string;
  endpoint: string;
  type: SearchType;
  region: SearchRegion;
  /** Partner-integration e-mail; empty when there is none. */
  partnerEmail: string;
  token: string;
  readOnlyToken: string;
  inputEnrichmentEnabled: boolean;
  /** Unix seconds. */
  creationTime: number;
}

export interface SearchLimits {
  max_vector_count: number;
  /** -1 means unlimited for the monthly/daily counters and bandwidth (docs/management.md "Search indexes"). */
  max_monthly_reranks: number;
  max_daily_updates: number;
  max_daily_queries: number;
  max_monthly_bandwidth: number;
  max_writes_per_second: number;
  max_query_per_second: number;
  max_reads_per_request: number;
  max_writes_per_request: number;
}

const GB = 1024 * 1024 * 1024;

export const searchLimits: Record<SearchType, SearchLimits> = {
  free: {
    max_vector_count: 10_000,
    max_monthly_reranks: 0,
    max_daily_updates: 10_000,
    max_daily_queries: 10_000,
    max_monthly_bandwidth: 50 * GB,
    max_writes_per_second: 1000,
    max_query_per_second: 1000,
    max_reads_per_request: 100,
    max_writes_per_request: 100,
  },
  payg: {
    max_vector_count: 2_000_000,
    max_monthly_reranks: -1,
    max_daily_updates: -1,
    max_daily_queries: -1,
    max_monthly_bandwidth: -1,
    max_writes_per_second: 1000,
    max_query_per_second: 1000,
    max_reads_per_request: 100,
    max_writes_per_request: 100,
  },
  fixed: {
    max_vector_count: 100_000_000,
    max_monthly_reranks: -1,
    max_daily_updates: -1,
    max_daily_queries: -1,
    max_monthly_bandwidth: -1,
    max_writes_per_second: 10_000,
    max_query_per_second: 10_000,
    max_reads_per_request: 1000,
    max_writes_per_request: 1000,
  },
};

/** Region suffix of an index endpoint slug (`glowing-baboon-15797-us1` in the reference). */
export const regionSuffix: Record<SearchRegion, string> = { "eu-west-1": "eu1", "us-central1": "us1" };

const ADJECTIVES = ["amber", "brave", "calm", "daring", "eager", "fresh", "glowing", "humble", "keen", "lively"];
const ANIMALS = ["alpaca", "baboon", "condor", "dingo", "egret", "falcon", "gecko", "heron", "ibex", "jackal"];

/** A readable, unique-enough slug; `random` returns integers in [0, n). */
export function endpointSlug(region: SearchRegion, random: (n: number) => number): string {
  return `${ADJECTIVES[random(ADJECTIVES.length)]}-${ANIMALS[random(ANIMALS.length)]}-${10_000 + random(90_000)}-${regionSuffix[region]}`;
}
