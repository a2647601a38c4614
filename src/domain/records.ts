import type { HeaderMap } from "./headers.js";
import type { Message } from "./message.js";
import type { PlanName } from "./plans.js";

/*
 * The records every layer shares: services and the HTTP views read them, the store persists them. They live here,
 * below all of them, so that the layers point one way (docs/architecture.md); the store's interfaces re-export them.
 */

export interface Account {
  id: string;
  customerId: string;
  token: string;
  /**
   * The account's second token, which may only read (docs/errors.md `read_only`). Accounts created by newAccount
   * always have one and the 008 migration gave every older account one; optional so code that builds an account for
   * messaging alone (test fixtures) need not invent one.
   */
  readOnlyToken?: string;
  password: string;
  currentSigningKey: string;
  nextSigningKey: string;
  plan: PlanName;
  state: string;
  active: boolean;
  createdAt: number;
  /**
   * Fields of the management record (docs/management.md "The account record") that the plan cannot derive. Optional so
   * code that builds an account for messaging alone need not know them; the store always fills them on read.
   */
  modifyingState?: string;
  /** Unix seconds. */
  lastPlanUpgradeTime?: number;
  reservedPrice?: number;
  prodPackEnabled?: boolean;
  prometheusEnabled?: boolean;
  /** Set for enterprise accounts: `reserved_type` becomes `enterprise:<id>` and `enterprise.enabled` true. */
  enterpriseId?: string;
  region?: string;
  /** Dollars per month; 0 means no limit. */
  budget?: number;
  createdBy?: string;
}

/** Account fields `accountUpdate` may overwrite. */
export type AccountPatch = Partial<
  Pick<
    Account,
    | "token"
    | "readOnlyToken"
    | "password"
    | "currentSigningKey"
    | "nextSigningKey"
    | "plan"
    | "state"
    | "active"
    | "customerId"
    | "modifyingState"
    | "lastPlanUpgradeTime"
    | "reservedPrice"
    | "prodPackEnabled"
    | "prometheusEnabled"
    | "budget"
  >
>;

/** A management-API user: HTTP Basic `email:api_key`. The key is kept only as a salted scrypt hash. */
export interface Customer {
  email: string;
  apiKeyHash: string;
  createdAt: number;
}

/** One endpoint of a URL group; its URL is its identity inside the group (docs/url-groups.md). */
export interface TopicEndpoint {
  url: string;
  name?: string;
}

/** A URL group (path word `topics`): endpoints in insertion order and optional default headers. */
export interface Topic {
  name: string;
  createdAt: number;
  updatedAt: number;
  endpoints: TopicEndpoint[];
  /** Default headers applied to every publish to the group (canonical names); absent when none are set. */
  headers?: HeaderMap;
}

/**
 * A FIFO queue (docs/queues.md). Its messages are rows of the hot `messages` table with `queue_name` set; the
 * first `parallelism` unfinished ones (by arrival) may be attempted, the rest wait in state QUEUED. The rule lives
 * in the store, so it holds when several nodes share one database.
 */
export interface Queue {
  name: string;
  parallelism: number;
  paused: boolean;
  createdAt: number;
  updatedAt: number;
  /** Messages of the queue not yet delivered or failed (HELD ones, waiting only for callbacks, excluded). */
  lag: number;
}

/** What became of one attempt. The delivery engine decides; the store applies it atomically. */
export type Outcome =
  | { kind: "delivered" }
  | { kind: "retry"; dueAt: number }
  | { kind: "failed"; dlqId: string; response: DlqResponse }
  | { kind: "canceled" };

export interface DlqResponse {
  status?: number;
  headers: Record<string, string[]>;
  body: Buffer;
  error?: string;
}

export interface DlqEntry {
  dlqId: string;
  /** The message as it was when it failed (state and lease fields carry no meaning here). */
  message: Message;
  /** Unix ms at which the message entered the DLQ; fromDate/toDate and retention apply to it. */
  failedAt: number;
  /** The last failed attempt's response (or its network error). */
  response: DlqResponse;
  /** Position of the entry, usable as a list cursor (a page cut short by its size ends at an entry's seq). */
  seq?: string;
}

