import { fastPathRoom } from "../../domain/flow-claim.js";
import type { NewMessage } from "../../domain/message.js";
import type { InsertItem } from "../store.js";
import type { Tx } from "./write-batcher.js";

/**
 * The publish fast path on PostgreSQL: a message inserted already leased (ACTIVE) must respect its account's
 * max_global_parallelism exactly like the claim (flow-control.ts), without making publishes queue behind claims.
 * `active` below is an upper bound of the account's deliveries in flight (`flow_accounts.active_bound`, see
 * migration 005): when it is too high the message simply goes through the claim, which counts.
 * The decision itself is `fastPathRoom` (src/domain/flow-claim.ts), as on SQLite. The plpgsql function only takes
 * the account's row lock and reads what the decision needs: server-side so that the lock, the bound's bookkeeping
 * and the read cost one round trip per account on the publish path.
 */
const fastPathSql = { name: "ferry_flow_fast_path", text: "SELECT * FROM ferry_flow_fast_path($1, $2)" };

/**
 * The publish fast path's gate (one per insert operation): may this message be inserted already ACTIVE? Never for
 * a keyed message (it goes through the claim); otherwise only while the account's global wait list is empty and its
 * deliveries in flight stay under max_global_parallelism, decided under the account's row lock (taken without
 * waiting, see the migration's ferry_flow_fast_path). `items` are the operation's items: the gate asks once per
 * account for all the leases they may take.
 */
export function fastPathGate(
  tx: Tx,
  items: readonly InsertItem[],
  /** Told each account's room for more deliveries in flight, as read (Infinity: no bound). */
  roomOf?: (accountId: string, room: number) => void,
): (m: NewMessage) => Promise<boolean> {
  const room = new Map<string, number>();
  return async (m) => {
    if (m.spec.flowControl) return false;
    let left = room.get(m.accountId);
    if (left === undefined) {
      const wanted = items.filter(
        (i) => i.leaseOwner !== undefined && !i.message.spec.flowControl && i.message.accountId === m.accountId,
      ).length;
      const [row] = await tx.query<{ plan: string | null; waiting: boolean; active: number }>(fastPathSql, [
        m.accountId,
        wanted,
      ]);
      // No row: another transaction holds the account's flow row; the message goes through the claim.
      left = row ? fastPathRoom(row) : 0;
      if (row) roomOf?.(m.accountId, left);
    }
    room.set(m.accountId, left - 1);
    return left > 0;
  };
}
