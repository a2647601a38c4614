import type { Dialect } from "../domain/dialect.js";
import type { ConfigSource } from "../domain/publish-config.js";
import { AppError } from "../errors.js";
import type { Account } from "../domain/records.js";
import type { Services } from "./context.js";
import { type PublishedMessage, publish, resolveTargets } from "./publish.js";
import { ensureQueue } from "./queues.js";

/** One parsed batch item (docs/batch.md): a publish, or an enqueue when `queueName` is set. */
export interface BatchItem {
  destination: string;
  source: ConfigSource;
  body: Buffer;
  queueName?: string;
}

/** Per item: its published messages (one per target), or the error that refused it alone. */
export type BatchOutcome = PublishedMessage[] | AppError;

/** Only refusals are per item; an unexpected failure (storage down) fails the whole request. */
async function settle<T>(promise: Promise<T>): Promise<T | AppError> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

/**
 * Batch publish: every item goes through the publish use case; a bad item gets its own error while the others are
 * sent. Queues are made sure of and group names resolved first, so that every publish then runs synchronously up
 * to its insert: all items land in the same group-commit transaction, in request order (FIFO within a queue).
 */
export async function publishBatch(
  services: Services,
  account: Account,
  items: (BatchItem | AppError)[],
  callerIp: string,
  /** The request's dialect: its items may not mix another (docs/batch.md). */
  dialect: Dialect,
): Promise<BatchOutcome[]> {
  const queues = new Map<string, Promise<undefined | AppError>>();
  for (const item of items) {
    if (item instanceof AppError || item.queueName === undefined || queues.has(item.queueName)) continue;
    queues.set(item.queueName, settle(ensureQueue(services, account, item.queueName).then(() => undefined)));
  }
  const prepared = await Promise.all(
    items.map(async (item) => {
      if (item instanceof AppError) return item;
      const queueError = item.queueName !== undefined ? await queues.get(item.queueName) : undefined;
      if (queueError) return queueError;
      const resolved = await settle(resolveTargets(services, account, item.destination));
      return resolved instanceof AppError ? resolved : { item, resolved };
    }),
  );
  return Promise.all(
    prepared.map((p) => {
      if (p instanceof AppError) return p;
      const { item, resolved } = p;
      const input: Parameters<typeof publish>[1] = {
        account,
        destination: item.destination,
        source: item.source,
        dialect,
        body: item.body,
        callerIp,
        resolved,
      };
      if (item.queueName !== undefined) input.queueName = item.queueName;
      return settle(publish(services, input));
    }),
  );
}
