import { cronFromText } from "../domain/cron.js";
import type { NewMessage } from "../domain/message.js";
import type { ParsedConfig } from "../domain/publish-config.js";
import { planDueTick, type Schedule } from "../domain/schedule.js";
import type { Account } from "../domain/records.js";
import type { PublishTarget, Services } from "./context.js";
import { buildMessages, isUrlDestination } from "./publish.js";
import { recordTick } from "../metrics/delivery-metrics.js";
import { RateLimitedLog } from "../logger.js";

/** Due schedules read per statement; every one of them is fired in the same group-commit turn. */
const DUE_BATCH = 200;
/** Bound of one pass: a backlog larger than this waits for the next pass (one second later by default). */
const MAX_BATCHES_PER_PASS = 50;

/**
 * The configuration of one triggered message: the stored spec, delayed from the moment it is published. Its dialect
 * is the one the schedule was created in (docs/messaging.md "Dialects").
 */
function tickConfig(schedule: Schedule, now: number): ParsedConfig {
  return {
    spec: schedule.spec,
    delayMs: schedule.delayMs,
    notBefore: schedule.delayMs > 0 ? now + schedule.delayMs : 0,
    // Messages created by schedules are not deduplicated (docs/schedules.md).
    contentBasedDedup: false,
    raw: () => undefined,
  };
}

/** The messages of one tick, or the reason there are none (a deleted account or URL group). */
async function tickMessages(
  services: Services,
  schedule: Schedule,
  now: number,
): Promise<{ messages: NewMessage[]; error?: string }> {
  const account = await services.store.accountGet({ id: schedule.accountId });
  if (!account) return { messages: [], error: `account ${schedule.accountId} not found` };
  let targets: PublishTarget[];
  if (isUrlDestination(schedule.destination)) {
    targets = [{ url: schedule.destination }];
  } else {
    try {
      // Resolved at every tick, so endpoints added to or removed from the group since creation count.
      targets = (await services.groups.resolve(account, schedule.destination)).targets;
    } catch (error) {
      return { messages: [], error: error instanceof Error ? error.message : String(error) };
    }
  }
  return { messages: scheduleMessages(schedule, account, targets, now) };
}

/** The messages one firing of `schedule` publishes to `targets` at `now`: a tick, or a run now (schedules.ts). */
export function scheduleMessages(schedule: Schedule, account: Account, targets: PublishTarget[], now: number): NewMessage[] {
  const input = {
    account,
    destination: schedule.destination,
    body: schedule.body ?? Buffer.alloc(0),
    callerIp: schedule.callerIp ?? "",
    scheduleId: schedule.id,
    ...(schedule.queueName !== undefined ? { queueName: schedule.queueName } : {}),
  };
  const messages = buildMessages(input, targets, tickConfig(schedule, now), now).map((b) => b.message);
  for (const m of messages) if (m.callerIp === "") delete m.callerIp;
  return messages;
}

/**
 * Handles one due schedule: plans the tick (fire the latest tick at most 60 s old, skip older ones, let a paused
 * schedule's ticks pass) and claims it in the store together with its messages. Returns the messages published,
 * empty when nothing fired or another node (or an earlier process) had claimed the tick already.
 */
async function handleDue(
  services: Services,
  schedule: Schedule,
  now: number,
  failures: RateLimitedLog,
): Promise<NewMessage[]> {
  const dueAt = schedule.nextRunAt!;
  const plan = planDueTick(cronFromText(schedule.cron), dueAt, now, schedule.paused);
  const claim: Parameters<Services["store"]["scheduleFire"]>[0] = {
    accountId: schedule.accountId,
    id: schedule.id,
    revision: schedule.revision,
    dueAt,
    messages: [],
    now,
  };
  if (plan.nextRunAt !== undefined) claim.nextRunAt = plan.nextRunAt;
  if (plan.fireTick !== undefined) {
    const { messages, error } = await tickMessages(services, schedule, now);
    claim.firedAt = plan.fireTick;
    claim.messages = messages;
    if (error !== undefined) {
      claim.error = error;
      // One line per tick that could not publish, rate-limited per destination like failed deliveries.
      const key = isUrlDestination(schedule.destination) ? scheduleHost(schedule.destination) : schedule.destination;
      const where = isUrlDestination(schedule.destination) ? { host: key } : { urlGroup: key };
      failures.info(key, now, { scheduleId: schedule.id, ...where, error }, "schedule could not publish");
    }
  }
  const claimed = await services.store.scheduleFire(claim);
  if (claimed) recordTick(plan.fireTick !== undefined, schedule.paused);
  return claimed ? claim.messages : [];
}

/**
 * One pass of the scheduler: every schedule whose stored tick is due is fired or skipped, and the dispatcher is
 * nudged for what was published. Safe to run on every node at once: the store's claim lets one of them win each tick.
 * Returns how many messages were published.
 */
export async function fireDueSchedules(
  services: Services,
  failures: RateLimitedLog = new RateLimitedLog(services.log),
): Promise<number> {
  const { store, clock, dispatcher, log } = services;
  let published = 0;
  for (let pass = 0; pass < MAX_BATCHES_PER_PASS; pass++) {
    const now = clock.now();
    const due = await store.scheduleListDue({ now, limit: DUE_BATCH });
    const results = await Promise.allSettled(due.map((s) => handleDue(services, s, now, failures)));
    for (const [i, r] of results.entries()) {
      if (r.status === "rejected") {
        log.error({ err: r.reason, scheduleId: due[i]!.id }, "schedule tick failed; retried at the next pass");
        continue;
      }
      for (const m of r.value) {
        published++;
        if (m.dueAt <= now) dispatcher.nudge();
        else dispatcher.noteDue(m.dueAt);
      }
    }
    // A short batch was the whole backlog; a failed tick stays due and is retried by the next pass, not this one.
    if (due.length < DUE_BATCH || results.some((r) => r.status === "rejected")) break;
  }
  return published;
}

/** A destination URL's host: what a failure line names and is rate-limited by, never the path or query. */
function scheduleHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(invalid url)";
  }
}
