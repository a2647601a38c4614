import { notFound } from "../errors.js";
import type { Account } from "../domain/records.js";
import type { LogFilter, MessageFilter, Order } from "../store/store.js";
import type { MessageRowFilter } from "../store/message-row-store.js";
import type { Services } from "./context.js";

export async function getMessage(services: Services, account: Account, id: string) {
  const message = await services.store.messageGet({ accountId: account.id, id });
  if (!message || message.state === "HELD") throw notFound(`message ${id}`);
  return message;
}

/** Cancels one message: 404 when it is unknown or already finished. */
export async function cancelMessage(services: Services, account: Account, id: string): Promise<number> {
  const cancelled = await cancelMessages(services, account, { messageIds: [id] });
  if (cancelled === 0) throw notFound(`message ${id}`);
  return cancelled;
}

/** `messageIds`, when given, overrides every other filter (docs/messaging.md "Messages and logs"). */
export async function cancelMessages(services: Services, account: Account, filter: MessageFilter, count?: number) {
  const effective = filter.messageIds ? { messageIds: filter.messageIds } : filter;
  const p: Parameters<typeof services.store.messageCancel>[0] = {
    accountId: account.id,
    now: services.clock.now(),
    filter: effective,
  };
  if (count !== undefined) p.count = count;
  const cancelled = await services.store.messageCancel(p);
  // A cancelled queue message frees its slot: the next one of its queue may be due now.
  if (cancelled > 0) services.dispatcher.nudge();
  return cancelled;
}

/** IN_PROGRESS is ACTIVE ∪ RETRY ∪ ERROR; both spellings of CANCELED are accepted (docs/states.md). */
export function expandStates(states: string[] | undefined): string[] | undefined {
  if (!states) return undefined;
  return [
    ...new Set(
      states.flatMap((s) => {
        const upper = s.toUpperCase();
        if (upper === "IN_PROGRESS") return ["ACTIVE", "RETRY", "ERROR"];
        if (upper === "CANCELLED") return ["CANCELED"];
        return [upper];
      }),
    ),
  ];
}

export function listLogs(
  services: Services,
  account: Account,
  p: { filter: LogFilter; cursor?: string; count: number; order: Order },
) {
  return services.store.logList({ accountId: account.id, ...p });
}

/**
 * A page of the account's messages, one entry per message with its current state (docs/messaging.md "Listing
 * messages"), read at `now`: the time its list states are decided at (a created message due later is DELAYED).
 */
export async function listMessages(
  services: Services,
  account: Account,
  p: { filter: MessageRowFilter; cursor?: string; count: number; order: Order },
) {
  const now = services.clock.now();
  const page = await services.store.messageRowList({ accountId: account.id, now, ...p });
  return { ...page, now };
}
