import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { createLogger } from "./logger.js";
import { buildApp } from "./app.js";
import type { Config } from "./config.js";
import { type Clock, systemClock } from "./domain/clock.js";
import { ulid } from "./domain/ids.js";
import { Dispatcher } from "./delivery/dispatcher.js";
import { parseEgressPolicy } from "./domain/egress-policy.js";
import { createHttpClient } from "./delivery/http-client.js";
import { buildCallbacks } from "./delivery/callbacks.js";
import { dialectFor } from "./http/dialect.js";
import { dlqTrimmer } from "./maintenance/dlq-trimmer.js";
import { IntervalLoop, type Loop } from "./maintenance/loop.js";
import { SchedulerLoop } from "./maintenance/scheduler.js";
import { urlGroups } from "./services/topics.js";
import { type BootstrapResult, usePlanOverrides } from "./services/accounts.js";
import { bootstrap as bootstrapAccounts } from "./services/customers.js";
import type { Services } from "./services/context.js";
import { openServerStore } from "./store/open.js";

export const version: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

export interface Ferry {
  app: FastifyInstance;
  services: Services;
  bootstrap: BootstrapResult;
  /** Base URL once listening, e.g. http://127.0.0.1:8080 */
  url: string;
  loops: Record<string, Loop>;
  /** Graceful stop: stop accepting, let deliveries finish within the grace period, close the store. */
  stop(): Promise<void>;
}

/** Opens the store, makes sure the default account exists, builds the app and starts every loop. */
export async function startFerry(config: Config, options: { clock?: Clock; log?: Logger } = {}): Promise<Ferry> {
  const log = options.log ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const store = await openServerStore(config, { log });
  await store.migrate();
  usePlanOverrides(config.planOverrides);
  const bootstrap = await bootstrapAccounts(config, store, clock.now());
  const nodeId = `node_${ulid()}`;
  const dialect = dialectFor(config.dialect, version);
  const http = createHttpClient({ egress: parseEgressPolicy(config.destinationAllow) });

  const services: Services = {
    config,
    store,
    clock,
    dialect,
    log,
    version,
    groups: urlGroups(store),
    dispatcher: undefined as unknown as Dispatcher, // set right below: the dispatcher and services refer to each other
  };
  const dispatcher = new Dispatcher({ store, clock, config, dialect, log, nodeId, http, callbacks: buildCallbacks });
  services.dispatcher = dispatcher;

  // A single-node store's leftover leases belong to a dead process: release them now, not after they expire.
  if (store.capabilities.singleNode) {
    await store.messageReleaseLeases({ now: clock.now(), expiredOnly: false, exceptOwner: nodeId });
  }

  const loops: Record<string, Loop> = {
    dispatcher,
    rescuer: new IntervalLoop(
      "rescuer",
      Math.max(500, Math.floor(config.leaseMs / 3)),
      async () => {
        const released = await store.messageReleaseLeases({ now: clock.now(), expiredOnly: true, exceptOwner: nodeId });
        if (released > 0) dispatcher.wake();
      },
      log,
    ),
    retention: new IntervalLoop(
      "retention",
      60_000,
      () => store.logDeleteBefore({ before: clock.now() - config.logRetentionMs, now: clock.now() }),
      log,
    ),
    dlqTrimmer: dlqTrimmer({ store, clock, log }),
    scheduler: new SchedulerLoop(services, config.schedulerIntervalMs),
  };

  const app = buildApp(services);
  const address = await app.listen({ port: config.port, host: config.host });
  for (const loop of Object.values(loops)) loop.start();
  // Several nodes (PostgreSQL): another node's NOTIFY wakes this dispatcher without waiting for the poll.
  const unsubscribeDue = store.subscribeDue?.(() => dispatcher.wake());

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await app.close();
      await dispatcher.stop(config.shutdownGraceMs);
      for (const [name, loop] of Object.entries(loops)) if (name !== "dispatcher") await loop.stop();
      unsubscribeDue?.();
      await http.close();
      await store.close();
    })();
    return stopping;
  };
  return { app, services, bootstrap, url: address, loops, stop };
}
