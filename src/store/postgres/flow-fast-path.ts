import { fastPathRoom } from "../../domain/flow-claim.js";
import type { NewMessage } from "../../domain/message.js";
import { plans } from "../../domain/plans.js";
import type { InsertItem } from "../store.js";
import type { Tx } from "./write-batcher.js";

/**
 * The publish fast path on PostgreSQL: a message inserted already leased (ACTIVE) must respect its account's
 * max_global_parallelism exactly like the claim (flow-control.ts), without making publishes queue behind claims, nor
 * the nodes' publishes behind each other. The decision itself is `fastPathRoom` (src/domain/flow-claim.ts), as on
 * SQLite. The plpgsql function (migration 067) reads what the decision needs: server-side so that the locks and the
 * bookkeeping cost one round trip per account on the publish path. For an account with a large bound, a node starts
 * deliveries from its SHARE of the bound (`flow_shares`, a row only this node takes), reserved once under the
 * account's row; otherwise, as before, under the account's row, held to COMMIT (docs/postgres.md "Flow control").
 */
const fastPathSql = {
  name: "ferry_flow_fast_path_share",
  text: "SELECT * FROM ferry_flow_fast_path($1, $2, $3, $4, $5, $6, $7)",
};

/** Plan names and their max_global_parallelism, for the function's cap (src/domain/flow-claim.ts accountCap). */
export const PLAN_NAMES = Object.keys(plans);
export const PLAN_CAPS = PLAN_NAMES.map((name) => plans[name as keyof typeof plans].max_global_parallelism);
/** An unknown plan name gets the pay-as-you-go limits (src/domain/flow-window.ts globalParallelismOf). */
export const DEFAULT_CAP = plans.paid.max_global_parallelism;

/**
 * The (node, account) pairs whose share a fast path of this process was granted: a claim of that node must hold
 * the share while it starts deliveries of the account (flow-control.ts). Shares are only ever created by their own
 * node's fast path, so this set holds every share of the nodes of this process (more, once some lapsed: a claim
 * then looks for a share that is gone, which costs one statement). Process-wide: node ids are unique per process.
 */
const grantedShares = new Set<string>();
const shareKey = (node: string, accountId: string) => `${node}\u0000${accountId}`;

/**
 * A run that did not read the gate's answer (fast-path-pipelined.ts) may have been granted a share: counted as held
 * (a claim then looks for it, one statement at most, as for a share that lapsed).
 */
export const mayHaveGrantedShare = (node: string, accountId: string): void => {
  grantedShares.add(shareKey(node, accountId));
};

/** True when `node` may hold a share of `accountId` (see grantedShares). */
export const mayHoldShare = (node: string, accountId: string): boolean =>
  grantedShares.has(shareKey(node, accountId));

/**
 * The publish fast path's gate (one per insert operation): may this message be inserted already ACTIVE? Never for
 * a keyed message (it goes through the claim); otherwise only while the account's global wait list is empty and its
 * deliveries in flight stay under max_global_parallelism, decided under this node's share of the bound or the
 * account's row lock (each waited for at most 50 ms, see migration 067's ferry_flow_fast_path). `items` are the operation's items: the gate asks once
 * per account for all the leases they may take, for their lease owner (this node).
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
      );
      const node = wanted[0]?.leaseOwner ?? "";
      const [row] = await tx.query<{ plan: string | null; waiting: boolean; active: number; shared: boolean }>(
        fastPathSql,
        [m.accountId, wanted.length, node, m.createdAt, PLAN_NAMES, PLAN_CAPS, DEFAULT_CAP],
      );
      // No row: another transaction holds the account's flow row; the message goes through the claim.
      left = row ? fastPathRoom(row) : 0;
      if (row?.shared) grantedShares.add(shareKey(node, m.accountId));
      // A share is only granted while at least half the account's bound is free: roomy (messages.ts TIGHT_ROOM).
      if (row) roomOf?.(m.accountId, row.shared ? Number.POSITIVE_INFINITY : left);
    }
    room.set(m.accountId, left - 1);
    return left > 0;
  };
}
