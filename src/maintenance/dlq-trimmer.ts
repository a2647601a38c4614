import type { Logger } from "pino";
import type { Clock } from "../domain/clock.js";
import type { PlanLimits } from "../domain/plans.js";
import type { Account } from "../domain/records.js";
import type { Store } from "../store/store.js";
import { IntervalLoop, type Loop } from "./loop.js";
import { nextTurn, RETENTION_CHUNK } from "./retention.js";

/**
 * DLQ retention (docs/dlq.md): entries older than the plan's `max_dlq_retention_time_milis` expire, and past
 * `max_dlq_size` the oldest entries are dropped. Like the retention loop, a pass deletes in small chunks, yielding
 * between them, until nothing is left to trim, so it keeps pace whatever the failure rate (docs/operations.md
 * "Table bounds"). Every pass works from the store's state alone, so any number of nodes may run it at once.
 * `limitsFor` gives an account's limits (the plan table in force: services.plans.limitsOf).
 */
export function dlqTrimmer(p: {
  store: Store;
  clock: Clock;
  log: Logger;
  /** How often a pass runs. (Default: 60000 ms) */
  intervalMs?: number;
  limitsFor: (account: Account) => Pick<PlanLimits, "max_dlq_retention_time_milis" | "max_dlq_size">;
  chunk?: number;
}): Loop {
  const chunk = p.chunk ?? RETENTION_CHUNK;
  const pass = async (): Promise<number> => {
    let total = 0;
    for (const accountId of await p.store.dlqAccountIds()) {
      const account = await p.store.accountGet({ id: accountId });
      if (!account) continue;
      const limits = p.limitsFor(account);
      const before = p.clock.now() - limits.max_dlq_retention_time_milis;
      for (;;) {
        const deleted = await p.store.dlqTrim({ accountId, before, maxSize: limits.max_dlq_size, limit: chunk });
        total += deleted;
        if (deleted < chunk) break;
        await nextTurn();
      }
    }
    return total;
  };
  return new IntervalLoop("dlq-trimmer", p.intervalMs ?? 60_000, pass, p.log);
}
