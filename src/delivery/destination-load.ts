import { type DestinationShares, destinationOf } from "../domain/destination.js";

/**
 * The attempts this node holds per destination (docs/reliability.md, "Isolation"): sending or waiting at the
 * DestinationGate, from their launch until their request ends. The claim leases no more for a destination than its
 * `share` (less while the node's waiting room is full: see the dispatcher) and walks past its other due messages
 * (Store.messageLeaseDue). So a destination that hangs holds its share of attempts, and its backlog, left due in the
 * store, no longer stands before other destinations' messages in the claim's due order.
 * When a destination falls back to `refillAt` (half of its waiting attempts have started), `onRefill` asks for a
 * claim, which takes its next messages in one go while the other half keeps its slots busy.
 */
export class DestinationLoad {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly share: number,
    private readonly refillAt: number,
    private readonly onRefill: () => void,
  ) {}

  add(url: string): void {
    const d = destinationOf(url);
    this.counts.set(d, (this.counts.get(d) ?? 0) + 1);
  }

  remove(url: string): void {
    const d = destinationOf(url);
    const n = (this.counts.get(d) ?? 1) - 1;
    if (n <= 0) this.counts.delete(d);
    else this.counts.set(d, n);
    if (n === this.refillAt) this.onRefill();
  }

  /** What the claim is told (src/domain/destination.ts); `share`: a smaller one for this claim. */
  shares(share = this.share): DestinationShares {
    return { share: Math.min(share, this.share), inUse: [...this.counts] };
  }

  /** Destinations at their share (or at `share`, a smaller one): the claim skips their messages. */
  full(share = this.share): string[] {
    const full: string[] = [];
    for (const [d, n] of this.counts) if (n >= share) full.push(d);
    return full;
  }
}
