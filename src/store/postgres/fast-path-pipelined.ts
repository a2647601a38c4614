import type { NewMessage } from "../../domain/message.js";
import { DEFAULT_CAP, mayHaveGrantedShare, PLAN_CAPS, PLAN_NAMES } from "./flow-fast-path.js";
import type { InsertItem } from "../store.js";
import type { Tx } from "./write-batch-tx.js";
import { composable } from "./compose.js";
import { arrayRows } from "./rows.js";

/**
 * The publish fast path's gate in a pipelined run (write-batch-tx.ts, Tx.pipelined): instead of reading the account's
 * room first (flow-fast-path.ts, one round trip before the INSERT can be sent), it takes for granted that every
 * message asking for the fast path gets it, and sends the same call of `ferry_flow_fast_path` wrapped in a check
 * (`ferry_expect`, migration 069) that fails the transaction unless the room was there. Then BEGIN, the check, the
 * INSERT, the flush and COMMIT leave in one write (docs/postgres.md, "One round trip per transaction"). When the room
 * was not there, nothing was committed and the batch runs again with the ordinary gate, which reads it.
 *
 * The function call is the gate's own (the account's row lock, the bound's bookkeeping), and its verdict is
 * `fastPathRoom` (src/domain/flow-claim.ts) written in SQL: no plan, or no wait list and `active + wanted` within the
 * plan's max_global_parallelism.
 */
const expectRoomSql = composable(
  "ferry_flow_fast_path_expect",
  [],
  [
    `ferry_expect(coalesce((
      SELECT f.plan IS NULL OR (NOT f.waiting AND f.active + $2 <= coalesce(c.cap, $5))
      FROM ferry_flow_fast_path($1, $2, $6, $7, $3, $4, $5) f
        LEFT JOIN ${arrayRows("c", [["plan", "text"], ["cap", "int8"]], 3)} ON c.plan = f.plan
    ), FALSE), 'the publish fast path''s room') AS ok`,
  ],
);

/** Every plan's max_global_parallelism, and the one an unknown plan name gets: the ordinary gate's. */
const PLAN_CAPS_ARGS = [PLAN_NAMES, PLAN_CAPS, DEFAULT_CAP] as const;

/**
 * Room this much above what a run asks for, as last read: below it the read comes first. The room shrinks by other
 * nodes' fast-path starts too (docs/postgres.md "Flow control"), and each wrong guess costs a transaction.
 */
export const ROOM_MARGIN = 64;

/**
 * An account's room for more fast-path starts as this node last knew it: set from the ordinary gate's reads
 * (`roomRead`), lowered by what each pipelined run takes. `Infinity`: no bound.
 */
export class KnownRoom {
  private readonly room = new Map<string, number>();

  roomRead(accountId: string, room: number): void {
    this.room.set(accountId, room);
  }

  /**
   * The pipelined gate for these items, or undefined when one of their accounts' room is unknown or too small for
   * a guess (the ordinary gate must read it). Sends the checks at once, before the INSERT that relies on them.
   */
  async gate(tx: Tx, items: readonly InsertItem[]): Promise<((m: NewMessage) => Promise<boolean>) | undefined> {
    const wanted = new Map<string, number>();
    let node = "";
    let now = 0;
    for (const i of items) {
      if (i.leaseOwner === undefined || i.message.spec.flowControl) continue;
      wanted.set(i.message.accountId, (wanted.get(i.message.accountId) ?? 0) + 1);
      node = i.leaseOwner;
      now = Math.max(now, i.message.createdAt);
    }
    for (const [accountId, count] of wanted) {
      const room = this.room.get(accountId);
      if (room === undefined || room < count + ROOM_MARGIN) return undefined;
    }
    // Sorted, as every other writer of several accounts' flow rows locks them (no deadlock between batches).
    for (const accountId of [...wanted.keys()].sort()) {
      const count = wanted.get(accountId)!;
      this.room.set(accountId, this.room.get(accountId)! - count);
      mayHaveGrantedShare(node, accountId);
      await tx.defer(expectRoomSql, [accountId, count, ...PLAN_CAPS_ARGS, node, now]);
    }
    return async (m) => !m.spec.flowControl;
  }
}
