import { validName } from "../domain/names.js";
import { notFound, quotaExceeded } from "../errors.js";
import type { Account, Queue } from "../domain/records.js";
import type { Services } from "./context.js";
import { cancelMessages } from "./messages.js";
import { type PublishedMessage, type PublishInput, publish } from "./publish.js";

/** Queue names follow the common name rule (docs/messaging.md "Names"); errors name the field `queueName`. */
export const queueName = (value: unknown): string => validName(value, "queueName");

function maxQueuesError(services: Services, account: Account) {
  return quotaExceeded(`max_queues reached: the plan allows ${services.plans.limitsOf(account).max_queues} queues`);
}

/** Creates the queue with parallelism 1 when it does not exist yet (the enqueue rule, docs/queues.md). */
export async function ensureQueue(services: Services, account: Account, name: string): Promise<void> {
  const result = await services.store.queueEnsure({
    accountId: account.id,
    name,
    now: services.clock.now(),
    maxQueues: services.plans.limitsOf(account).max_queues,
  });
  if (result === "max_queues") throw maxQueuesError(services, account);
}

/**
 * Enqueue: the publish use case with a queue. Messages are inserted QUEUED and the store promotes the head of the
 * queue in the same transaction; publish nudges the dispatcher for them.
 */
export async function enqueue(
  services: Services,
  input: PublishInput & { queueName: string },
): Promise<PublishedMessage[]> {
  await ensureQueue(services, input.account, input.queueName);
  return publish(services, input);
}

/** What an upsert sets (read from the request body by src/http/bodies/queues.ts). */
export interface QueueSettings {
  name: string;
  parallelism: number;
  paused: boolean;
}

/**
 * Creates or updates a queue. 412 over max_parallelism, or for a new queue over max_queues; an existing queue can
 * always be updated (docs/queues.md "Rules").
 */
export async function upsertQueue(services: Services, account: Account, settings: QueueSettings): Promise<void> {
  const { name, parallelism, paused } = settings;
  const limits = services.plans.limitsOf(account);
  if (parallelism > limits.max_parallelism) {
    throw quotaExceeded(
      `invalid parallelism: ${parallelism} is above the plan's max_parallelism (${limits.max_parallelism})`,
    );
  }
  const result = await services.store.queueUpsert({
    accountId: account.id,
    name,
    parallelism,
    paused,
    now: services.clock.now(),
    maxQueues: limits.max_queues,
  });
  if (result === "max_queues") throw maxQueuesError(services, account);
  services.dispatcher.nudge();
}

export async function getQueue(services: Services, account: Account, name: string): Promise<Queue> {
  const queue = await services.store.queueGet({ accountId: account.id, name: queueName(name) });
  if (!queue) throw notFound(`queue ${name}`);
  return queue;
}

export const listQueues = (services: Services, account: Account): Promise<Queue[]> =>
  services.store.queueList({ accountId: account.id });

/**
 * Deletes the queue and cancels the messages still in it (each gets its CANCELED log entry; one in flight is
 * cancelled when its attempt ends). Answers normally when the queue does not exist (docs/queues.md).
 */
export async function deleteQueue(services: Services, account: Account, name: string): Promise<void> {
  const queue = queueName(name);
  // Issued in the same tick: both land in one group-commit transaction, the cancel first.
  await Promise.all([
    cancelMessages(services, account, { queueName: [queue] }),
    services.store.queueDelete({ accountId: account.id, name: queue }),
  ]);
}

/** Pause keeps accepting messages but starts none; attempts already in flight finish. Idempotent. */
export async function setQueuePaused(services: Services, account: Account, name: string, paused: boolean) {
  const queue = queueName(name);
  const found = await services.store.queueSetPaused({
    accountId: account.id,
    name: queue,
    paused,
    now: services.clock.now(),
  });
  if (!found) throw notFound(`queue ${queue}`);
  if (!paused) services.dispatcher.nudge();
}
