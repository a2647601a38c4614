import { type FlowKeyState, windowAt } from "../domain/flow-window.js";
import { invalidField, notFound } from "../errors.js";
import type { FlowKeyRecord } from "../store/flow-control-store.js";
import type { Account } from "../domain/records.js";
import type { Services } from "./context.js";

/** A key's metrics as of `now` (docs/flow-control.md): the rate window that is over no longer counts. */
export interface FlowKeyMetrics {
  key: string;
  waitListSize: number;
  parallelismMax?: number;
  parallelismCount: number;
  rateMax?: number;
  rateCount: number;
  periodSec: number;
  /** Unix ms of the running window's start; undefined when no window is running. */
  periodStart?: number;
  paused: boolean;
  pinnedParallelism: boolean;
  pinnedRate: boolean;
}

export function metricsOf(r: FlowKeyRecord, now: number): FlowKeyMetrics {
  const state: FlowKeyState = {
    periodSec: r.periodSec,
    rateCount: r.rateCount,
    periodStart: r.periodStart,
    paused: r.paused,
  };
  const running = r.rate !== undefined && r.periodStart > 0 && windowAt(state, now).periodStart === r.periodStart;
  const m: FlowKeyMetrics = {
    key: r.key,
    waitListSize: r.waitListSize,
    parallelismCount: r.parallelismCount,
    rateCount: running ? r.rateCount : 0,
    periodSec: r.periodSec,
    paused: r.paused,
    pinnedParallelism: r.pinnedParallelism,
    pinnedRate: r.pinnedRate,
  };
  if (r.parallelism !== undefined) m.parallelismMax = r.parallelism;
  if (r.rate !== undefined) m.rateMax = r.rate;
  if (running) m.periodStart = r.periodStart;
  return m;
}

/** `GET /v2/flowControl`: the account's keys, optionally those whose name contains `search` (case-insensitive). */
export async function listFlowKeys(services: Services, account: Account, search?: string): Promise<FlowKeyMetrics[]> {
  const now = services.clock.now();
  const needle = search?.toLowerCase();
  const keys = await services.store.flowKeyList({ accountId: account.id });
  return keys.filter((k) => needle === undefined || k.key.toLowerCase().includes(needle)).map((k) => metricsOf(k, now));
}

export async function getFlowKey(services: Services, account: Account, key: string): Promise<FlowKeyMetrics> {
  const record = await services.store.flowKeyGet({ accountId: account.id, key });
  if (!record) throw notFound(`flow control key ${key}`);
  return metricsOf(record, services.clock.now());
}

/**
 * `reset` and `resetRate`: a new rate window starts now with a count of 0, so waiting messages may go at once.
 * The parallelism in use is the number of deliveries actually in flight (counted, never stored), so there is no
 * parallelism counter that could drift and need a reset; `reset` therefore does what `resetRate` does.
 */
export async function resetFlowKey(services: Services, account: Account, key: string): Promise<void> {
  const found = await services.store.flowKeyResetRate({ accountId: account.id, key, now: services.clock.now() });
  if (!found) throw notFound(`flow control key ${key}`);
  services.dispatcher.nudge();
}

/** While paused nothing of the key is dispatched and new messages go to its wait list; the window keeps running. */
export async function setFlowKeyPaused(services: Services, account: Account, key: string, paused: boolean) {
  const found = await services.store.flowKeySetPaused({
    accountId: account.id,
    key,
    paused,
    now: services.clock.now(),
  });
  if (!found) throw notFound(`flow control key ${key}`);
  if (!paused) services.dispatcher.nudge();
}

export interface PinInput {
  parallelism?: number;
  rate?: number;
  periodSec?: number;
}

/**
 * Pins the given parts: `parallelism` pins the parallelism; `rate` and/or `period` pin the rate part (a missing
 * one keeps the key's current value; a new key's period defaults to 1 s). Pinning restarts the rate window.
 * A key that does not exist yet is created, so a configuration can be fixed before the first message arrives.
 */
export async function pinFlowKey(services: Services, account: Account, key: string, input: PinInput): Promise<void> {
  if (input.parallelism === undefined && input.rate === undefined && input.periodSec === undefined) {
    throw invalidField("parallelism", "give at least one of parallelism, rate and period to pin");
  }
  if (input.rate === undefined) {
    const existing = await services.store.flowKeyGet({ accountId: account.id, key });
    if (input.periodSec !== undefined && existing?.rate === undefined) {
      throw invalidField("rate", "is required to pin a period on a key without a rate");
    }
    if (!existing && input.parallelism === undefined) {
      throw invalidField("parallelism", "a new key needs parallelism or rate");
    }
  }
  await services.store.flowKeyPin({ accountId: account.id, key, now: services.clock.now(), ...input });
  services.dispatcher.nudge();
}

export async function unpinFlowKey(
  services: Services,
  account: Account,
  key: string,
  parts: { parallelism: boolean; rate: boolean },
): Promise<void> {
  const found = await services.store.flowKeyUnpin({ accountId: account.id, key, now: services.clock.now(), ...parts });
  if (!found) throw notFound(`flow control key ${key}`);
}

/** `GET /v2/globalParallelism`: the account's bound on deliveries in flight and how many are in flight now. */
export async function globalParallelism(services: Services, account: Account) {
  return {
    parallelismMax: services.plans.limitsOf(account).max_global_parallelism,
    parallelismCount: await services.store.flowGlobalActive({ accountId: account.id }),
  };
}
