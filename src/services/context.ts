import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { Clock } from "../domain/clock.js";
import type { HeaderMap } from "../domain/headers.js";
import type { Dispatcher } from "../delivery/dispatcher.js";
import type { Dialect } from "../http/dialect.js";
import type { Account, Store } from "../store/store.js";
import type { Lifecycle } from "./lifecycle.js";

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

/** Everything a use case needs; built once in main.ts (and by the test helpers). */
export interface Services {
  config: Config;
  store: Store;
  clock: Clock;
  dialect: Dialect;
  log: Logger;
  dispatcher: Dispatcher;
  groups: GroupResolver;
  version: string;
  /** Starting, running or draining: what /ready reports besides the store. */
  lifecycle: Lifecycle;
}
