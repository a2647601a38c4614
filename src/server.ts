import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { createLogger } from "./logger.js";
import { buildApp } from "./app.js";
import type { Config } from "./config.js";
import { type Clock, systemClock } from "./domain/clock.js";
import { DlqIdMinter } from "./domain/dlq-id.js";
import { ulid } from "./domain/ids.js";
import { Dispatcher } from "./delivery/dispatcher.js";
import { parseEgressPolicy } from "./domain/egress-policy.js";
import { planBook } from "./domain/plans.js";
import { createHttpClient, type HttpClient } from "./delivery/http-client.js";
import { openEgressThread } from "./delivery/egress-thread/client.js";
import { buildCallbacks } from "./delivery/callbacks.js";
import { dialectsFor } from "./domain/dialect.js";
import { dlqTrimmer } from "./maintenance/dlq-trimmer.js";
import { leaseRescuer, releaseLeftoverLeases } from "./maintenance/lease-rescuer.js";
import type { Loop } from "./maintenance/loop.js";
import { retentionLoop } from "./maintenance/retention.js";
import { SchedulerLoop } from "./maintenance/scheduler.js";
import { urlGroups } from "./services/url-groups.js";
import type { BootstrapResult } from "./services/accounts.js";
import { bootstrap as bootstrapAccounts } from "./services/customers.js";
import type { Services } from "./services/context.js";
import { openServerStore } from "./store/open-server.js";
import { collectProcessMetrics } from "./metrics/registry.js";
import { builtinEmbedder, type Embedder } from "./search/embedder.js";
import { openAiEmbedder } from "./search/openai-embedder.js";
import { Lifecycle } from "./services/lifecycle.js";
import { type Listener, openListener } from "./http/boot-listener.js";

export const version: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

export interface Ferry {
  app: FastifyInstance;
  services: Services;
  /** The delivery engine (also `loops.dispatcher`); services see it only as a DeliveryHandoff. */
  dispatcher: Dispatcher;
  bootstrap: BootstrapResult;
  /** Outgoing HTTP of deliveries and callbacks: the egress thread's client unless FERRY_EGRESS_THREAD=off. */
  http: HttpClient;
  /** Base URL once listening, e.g. http://127.0.0.1:8080 */
  url: string;
  loops: Record<string, Loop>;
  /**
   * Graceful stop: /ready answers 503 at once and no new attempts start; in-flight deliveries finish within the
   * grace period while HTTP still answers; then HTTP closes, the loops stop and the store closes.
   */
  stop(): Promise<void>;
}

/** Opens the store, makes sure the default account exists, builds the app and starts every loop. */
export async function startFerry(config: Config, options: { clock?: Clock; log?: Logger } = {}): Promise<Ferry> {
  const log = options.log ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  collectProcessMetrics();
  const lifecycle = new Lifecycle();
  const listener = await openListener(config);
  // What a failed start must close again: the store, so its SQLite lock is released (a later start may follow).
  const opened: { close(): Promise<void> }[] = [listener];
  try {
    return await startBehind(listener, config, { log, clock, lifecycle, opened });
  } catch (error) {
    for (const part of opened.reverse()) await part.close().catch(() => {});
    throw error;
  }
}

/** Everything after the listener answers "starting": the store, the services, the loops, then the app on it. */
async function startBehind(
  listener: Listener,
  config: Config,
  { log, clock, lifecycle, opened }: { log: Logger; clock: Clock; lifecycle: Lifecycle; opened: { close(): Promise<void> }[] },
): Promise<Ferry> {
  const store = await openServerStore(config, { log, now: clock.now() });
  opened.push(store);
  await store.migrate();
  const plans = planBook(config.planOverrides);
  const bootstrap = await bootstrapAccounts(config, store, clock.now());
  const nodeId = `node_${ulid()}`;
  const dialects = dialectsFor(config.dialect, version);
  const http = config.egressThread
    ? openEgressThread({ destinationAllow: config.destinationAllow, log })
    : createHttpClient({ egress: parseEgressPolicy(config.destinationAllow) });

  // A number no other process on this database gets: DLQ ids minted here cannot collide with another node's.
  const dlqIds = new DlqIdMinter(await store.nodeNumberTake());
  const dispatcher = new Dispatcher({
    store,
    clock,
    config,
    dialects,
    plans,
    log,
    nodeId,
    http,
    callbacks: buildCallbacks,
    dlqIds,
  });
  const services: Services = {
    config,
    store,
    clock,
    dialects,
    log,
    version,
    groups: urlGroups(store),
    lifecycle,
    plans,
    dispatcher,
    embedder: searchEmbedder(config),
  };

  await releaseLeftoverLeases({ store, clock, nodeId });

  const loops: Record<string, Loop> = {
    dispatcher,
    rescuer: leaseRescuer({ store, clock, log, nodeId, leaseMs: config.leaseMs, onReleased: () => dispatcher.nudge() }),
    retention: retentionLoop({ store, clock, log, logRetentionMs: config.logRetentionMs }),
    dlqTrimmer: dlqTrimmer({ store, clock, log, limitsFor: plans.limitsOf }),
    scheduler: new SchedulerLoop(services, config.schedulerIntervalMs),
  };

  const app = buildApp(services, listener);
  await app.ready();
  listener.serve();
  for (const loop of Object.values(loops)) loop.start();
  lifecycle.started();
  // Several nodes (PostgreSQL): another node's NOTIFY nudges this dispatcher without waiting for the poll.
  const unsubscribeDue = store.subscribeDue?.(() => dispatcher.nudge());

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      lifecycle.drain();
      await dispatcher.stop(config.shutdownGraceMs);
      await app.close();
      await listener.close();
      for (const [name, loop] of Object.entries(loops)) if (name !== "dispatcher") await loop.stop();
      unsubscribeDue?.();
      await http.close();
      await store.close();
    })();
    return stopping;
  };
  return { app, services, dispatcher, bootstrap, http, url: listener.url, loops, stop };
}

/** FERRY_EMBEDDINGS_URL's OpenAI-compatible endpoint, or the built-in lexical embedder (docs/search.md "Embeddings"). */
function searchEmbedder(config: Config): Embedder {
  const { embeddingsUrl, embeddingsModel, embeddingsApiKey } = config;
  if (!embeddingsUrl) return builtinEmbedder;
  return openAiEmbedder({
    url: embeddingsUrl,
    model: embeddingsModel,
    ...(embeddingsApiKey ? { apiKey: embeddingsApiKey } : {}),
  });
}
