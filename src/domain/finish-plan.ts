import type { Message } from "./message.js";
import { inQueue } from "./queue-slots.js";
import type { Outcome } from "./records.js";

/**
 * The outcome most attempts have: delivered, outside a FIFO queue, creating no callback and not being one. It needs
 * no cancel flag, no queue slot, no parent release and no insert, so the adapters apply it with one DELETE of the
 * leased row (SQLite: per message; PostgreSQL: one for the whole batch's plain deliveries).
 */
export const isPlainDelivery = (p: {
  message: Pick<Message, "parentId" | "kind" | "queueName">;
  outcome: Outcome;
  newMessages: readonly unknown[];
}): boolean => p.outcome.kind === "delivered" && p.newMessages.length === 0 && p.message.parentId === undefined && !inQueue(p.message);
