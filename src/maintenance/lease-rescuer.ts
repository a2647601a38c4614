import type { Logger } from "pino";
import type { Clock } from "../domain/clock.js";
import type { Store } from "../store/store.js";
import { IntervalLoop, type Loop } from "./loop.js";

/**
 * At start-up: on a single-node store (SQLite) every lease left over belongs to a process that died, so it is
 * released now instead of after it expires. Several nodes (PostgreSQL) leave that to the rescuer.
 */
export async function releaseLeftoverLeases(p: { store: Store; clock: Clock; nodeId: string }): Promise<void> {
  if (!p.store.capabilities.singleNode) return;
  await p.store.messageReleaseLeases({ now: p.clock.now(), expiredOnly: false, exceptOwner: p.nodeId });
}

/**
 * The lease rescuer: a message whose lease expired belongs to a node that died or stalled mid-attempt; releasing it
 * makes it claimable again, by any node (docs/states.md "Leases"). Leases of this node are renewed by its dispatcher,
 * so they never expire here while it runs. Runs every third of the lease, and at least every 500 ms apart.
 * `onReleased` hears how many came back, so the local dispatcher can claim them at once instead of at its next poll.
 */
export function leaseRescuer(p: {
  store: Store;
  clock: Clock;
  log: Logger;
  /** This node's lease owner id: its own leases are never released here. */
  nodeId: string;
  leaseMs: number;
  onReleased: (count: number) => void;
}): Loop {
  const pass = async (): Promise<number> => {
    const released = await p.store.messageReleaseLeases({ now: p.clock.now(), expiredOnly: true, exceptOwner: p.nodeId });
    if (released > 0) p.onReleased(released);
    return released;
  };
  return new IntervalLoop("rescuer", Math.max(500, Math.floor(p.leaseMs / 3)), pass, p.log);
}
