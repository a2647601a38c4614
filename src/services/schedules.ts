import type { Dialect } from "../domain/dialect.js";
import { cronFromText, nextTickAfter, parseCron } from "../domain/cron.js";
import { newScheduleId } from "../domain/ids.js";
import type { ConfigSource } from "../domain/publish-config.js";
import { parsePublishConfig } from "../domain/publish-config.js";
import { parseScheduleId, type ScheduleWithStates } from "../domain/schedule.js";
import { AppError, invalidField, notFound, quotaExceeded, quoted } from "../errors.js";
import type { NewSchedule } from "../store/schedule-store.js";
import type { Account } from "../domain/records.js";
import type { Services } from "./context.js";
import { isUrlDestination, resolveTargets, withDefaults } from "./publish.js";
import { enforceDailyQuota } from "./limits.js";
import { scheduleMessages } from "./schedule-ticks.js";
import { connectUrls, refuseDeniedLiterals } from "./egress-check.js";

export interface CreateScheduleInput {
  account: Account;
  /** A full http(s) URL (query string included) or a URL-group name (docs/schedules.md). */
  destination: string;
  /** Request headers plus `svc-*` query parameters: every publish header, `Svc-Cron`, `Svc-Schedule-Id`, … */
  source: ConfigSource;
  /** The names `source` is written in; every triggered message is delivered in them (docs/messaging.md "Dialects"). */
  dialect: Dialect;
  body: Buffer;
  /** The creator's IP: every triggered message carries it to the destination. */
  callerIp: string;
}

/** Queue names follow the same rule as schedule ids and URL-group names (docs/queues.md). */
const QUEUE_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * Creates a schedule, or overwrites the one named by `Svc-Schedule-Id` (every field replaced: fields not sent are
 * cleared). The configuration is validated and parsed now, exactly as a publish would be, and stored parsed; each
 * tick then publishes it unchanged. Returns the schedule id.
 */
export async function createSchedule(services: Services, input: CreateScheduleInput): Promise<string> {
  const { store, clock } = services;
  const { dialect } = input;
  const field = (name: string) => dialect.header(name);
  const limits = services.plans.limitsOf(input.account);
  if (input.body.length > limits.max_message_size) {
    throw new AppError(
      "payload_too_large",
      `invalid body: ${input.body.length} bytes is above the plan's max_message_size (${limits.max_message_size})`,
    );
  }
  if (input.destination === "") throw invalidField("destination", "is required: a http(s) URL or a URL-group name");
  const now = clock.now();
  // A group must exist when the schedule is created; its endpoints are resolved again at every tick.
  const { targets, defaultHeaders } = await resolveTargets(services, input.account, input.destination);
  const source = withDefaults(input.source, defaultHeaders, services.dialects, dialect);
  const parsed = parsePublishConfig(source, dialect, limits, now);
  parsed.spec.dialect = dialect.name;
  refuseDeniedLiterals(services.config, connectUrls(targets, parsed.spec, field));

  const cron = parseCron(parsed.raw("cron") ?? "", field("Cron"));
  if (parsed.raw("not-before") !== undefined) {
    throw invalidField(field("Not-Before"), `is not supported on schedules; use ${field("Delay")}`);
  }
  const idRaw = parsed.raw("schedule-id");
  const id = idRaw === undefined ? newScheduleId() : parseScheduleId(idRaw, field("Schedule-Id"));
  const queueRaw = parsed.raw("queue-name")?.trim();
  if (queueRaw !== undefined && queueRaw !== "" && !QUEUE_NAME.test(queueRaw)) {
    throw invalidField(field("Queue-Name"), `${quoted(queueRaw)} may contain only letters, digits, "-", "_" and "."`);
  }

  const schedule: NewSchedule = {
    id,
    accountId: input.account.id,
    destination: input.destination,
    cron: cron.text,
    spec: parsed.spec,
    delayMs: parsed.delayMs,
    callerIp: input.callerIp,
    createdAt: now,
  };
  const nextRunAt = nextTickAfter(cron, now);
  if (nextRunAt !== undefined) schedule.nextRunAt = nextRunAt;
  if (input.body.length > 0) schedule.body = input.body;
  if (queueRaw !== undefined && queueRaw !== "") schedule.queueName = queueRaw;

  const result = await store.scheduleUpsert({ schedule, maxSchedules: limits.max_schedules });
  if (result === "quota_exceeded") {
    throw quotaExceeded(`max_schedules reached: the plan allows ${limits.max_schedules} schedules`);
  }
  return id;
}

export async function getSchedule(services: Services, account: Account, id: string): Promise<ScheduleWithStates> {
  const schedule = await services.store.scheduleGet({ accountId: account.id, id });
  if (!schedule) throw notFound(`schedule ${id}`);
  return schedule;
}

export function listSchedules(services: Services, account: Account): Promise<ScheduleWithStates[]> {
  return services.store.scheduleList({ accountId: account.id });
}

export async function deleteSchedule(services: Services, account: Account, id: string): Promise<void> {
  if (!(await services.store.scheduleDelete({ accountId: account.id, id }))) throw notFound(`schedule ${id}`);
}

/** Idempotent. While paused, ticks pass without publishing. */
export async function pauseSchedule(services: Services, account: Account, id: string): Promise<void> {
  if (!(await services.store.scheduleSetPaused({ accountId: account.id, id, paused: true }))) {
    throw notFound(`schedule ${id}`);
  }
}

/** Idempotent. Ticks missed while paused are not fired: the next tick is the first one after now. */
export async function resumeSchedule(services: Services, account: Account, id: string): Promise<void> {
  const { store, clock } = services;
  const current = await getSchedule(services, account, id);
  const p: Parameters<typeof store.scheduleSetPaused>[0] = { accountId: account.id, id, paused: false };
  const next = nextTickAfter(cronFromText(current.cron), clock.now());
  if (next !== undefined) p.nextRunAt = next;
  if (!(await store.scheduleSetPaused(p))) throw notFound(`schedule ${id}`);
}

/**
 * Run now (docs/schedules.md "Run now"): publishes the schedule's message once, at once, exactly as a tick would
 * (one per endpoint of a URL group, resolved now; its delay applies), paused or not. Its ticks, next run and last-run
 * fields are left alone. A publish-type call: it counts against the daily quota. Returns the messages published.
 */
export async function triggerSchedule(
  services: Services,
  account: Account,
  id: string,
): Promise<{ messageId: string; url: string }[]> {
  const { store, clock, config, dispatcher } = services;
  const schedule = await getSchedule(services, account, id);
  // As a tick resolves them (schedule-ticks.ts): the stored URL as it is, or the group's endpoints now (404 if gone).
  const targets = isUrlDestination(schedule.destination)
    ? [{ url: schedule.destination }]
    : (await services.groups.resolve(account, schedule.destination)).targets;
  const now = clock.now();
  const messages = scheduleMessages(schedule, account, targets, now);
  await enforceDailyQuota(services, account, messages.length);
  await store.messageInsertMany({ items: messages.map((message) => ({ message })), now, dedupWindowMs: config.dedupWindowMs });
  for (const m of messages) {
    if (m.dueAt <= now) dispatcher.nudge();
    else dispatcher.noteDue(m.dueAt);
  }
  return messages.map((m) => ({ messageId: m.id, url: m.url }));
}
