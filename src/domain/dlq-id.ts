/** How many ids one node may mint within one millisecond before it borrows the next millisecond. */
export const IDS_PER_MS = 1 << 20;

/**
 * DLQ ids keep the Redis-stream-like form `<ms>-<seq>` (docs/dlq.md) and are unique across every
 * node on one database by construction, not by chance:
 * - `seq` = node × 2^20 + n, with n < 2^20, so `seq` decodes to exactly one (node, n);
 * - `node` is handed out once per process by the database (nodeNumberTake), so no two processes share it;
 * - within a process, (ms, n) strictly increases: n restarts at 0 when the clock moves forward, counts up within a
 *   millisecond (or while the clock stands still or goes back), and at 2^20 moves on to the next millisecond.
 * Two equal ids would need the same node and the same (ms, n), which one process never mints twice.
 * State lives in the instance, one per process, owned by whoever delivers (the dispatcher).
 */
export class DlqIdMinter {
  private lastMs = Number.NEGATIVE_INFINITY;
  private n = 0;

  constructor(private readonly node: number) {
    if (!Number.isSafeInteger(node) || node < 0) throw new Error(`node number must be a non-negative integer: ${node}`);
  }

  next(now: number): string {
    if (now > this.lastMs) {
      this.lastMs = now;
      this.n = 0;
    } else if (++this.n >= IDS_PER_MS) {
      this.lastMs += 1;
      this.n = 0;
    }
    // BigInt: node × 2^20 passes 2^53 after ~8.6 billion node numbers; the string stays exact whatever the node.
    return `${this.lastMs}-${BigInt(this.node) * BigInt(IDS_PER_MS) + BigInt(this.n)}`;
  }
}
