import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { Clock } from "../domain/clock.js";
import type { HeaderMap } from "../domain/headers.js";
import type { Message } from "../domain/message.js";
import type { PlanBook } from "../domain/plans.js";
import type { Dialects } from "../domain/dialect.js";
import type { Account } from "../domain/records.js";
import type { Embedder } from "../search/embedder.js";
import type { StepDelivery } from "../domain/workflow.js";
import type { Store } from "../store/store.js";
import type { Lifecycle } from "./lifecycle.js";

/**
 * What a publish answers per message. Here, not in publish.ts: workflow-publish.ts returns it too, and publish.ts
 * imports that file (test/unit/import-cycles.test.ts).
 */
export interface PublishedMessage {
  messageId: string;
  url: string;
  deduplicated: boolean;
}

/** One delivery target of a publish: a URL, or one endpoint of a URL group. */
export interface PublishTarget {
  url: string;
  topicName?: string;
  endpointName?: string;
}

/** Resolves a URL-group name to its endpoints and default headers (owned by the URL-group capability). */
export interface GroupResolver {
  resolve(account: Account, name: string): Promise<{ targets: PublishTarget[]; defaultHeaders: HeaderMap }>;
}

/**
 * What the use cases need of the delivery engine (src/delivery/dispatcher.ts implements it). Declared here, on the
 * services' side, so that services never import delivery: the layers point one way (docs/architecture.md).
 */
export interface DeliveryHandoff {
  /** This node's lease owner id: messages inserted already leased to it are delivered by it. */
  readonly owner: string;
  /** Capacity for the publish fast path: up to `n` messages may be inserted already leased to this node. */
  reserve(n: number): number;
  /**
   * Hands over messages inserted leased to this node and returns the reservations that went unused. `steps`: for a
   * run's step, its run and history as its append read them, so its attempt reads nothing (docs/workflows.md).
   */
  deliverLeased(
    messages: Message[],
    reservedCount: number,
    account?: Account,
    steps?: ReadonlyMap<string, StepDelivery>,
  ): void;
  /** Asks for a claim soon (docs/glossary.md "nudge"). */
  nudge(): void;
  /** A message becomes due at `at`: the engine makes sure it looks by then. */
  noteDue(at: number): void;
}

/** Everything a use case needs; built once in server.ts (and by the CLI). */
export interface Services {
  config: Config;
  store: Store;
  clock: Clock;
  /**
   * Both dialects: a request's own names pick its dialect (`request.dialect`, handed to the use cases); the default
   * (FERRY_DIALECT) names what no request decided (docs/messaging.md "Dialects").
   */
  dialects: Dialects;
  log: Logger;
  dispatcher: DeliveryHandoff;
  /** The plan table in force (built-in limits with the configured overrides). */
  plans: PlanBook;
  groups: GroupResolver;
  version: string;
  /** Starting, running or draining: what /ready reports besides the store. */
  lifecycle: Lifecycle;
  /**
   * Turns search documents and queries into vectors (docs/search.md "Embeddings"): FERRY_EMBEDDINGS_URL's endpoint,
   * or the built-in lexical embedder. Built once in server.ts.
   */
  embedder: Embedder;
}
