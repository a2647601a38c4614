/**
 * Per-destination bound on attempts in flight on one node (docs/reliability.md, "Isolation"). An attempt waits here,
 * before any connection is opened, while its destination (scheme, host and port) already has `limit` attempts
 * running. Waiting attempts do not count against the node's delivery concurrency (the dispatcher subtracts them),
 * so one destination that hangs holds at most `limit` of the node's slots and every other destination keeps the
 * rest. Waiters are served first in, first out.
 */
export class DestinationGate {
  private readonly active = new Map<string, number>();
  private readonly queues = new Map<string, (() => void)[]>();
  private waitingCount = 0;

  constructor(private readonly limit: number) {}

  /** Attempts waiting for their destination's slot, on every destination. */
  get waiting(): number {
    return this.waitingCount;
  }

  /** Resolves with a release function once the destination of `url` has a free slot. */
  async acquire(url: string): Promise<() => void> {
    const key = destinationKey(url);
    const running = this.active.get(key) ?? 0;
    if (running < this.limit) {
      this.active.set(key, running + 1);
    } else {
      this.waitingCount++;
      // The releasing attempt hands its slot over: `active` stays the same.
      await new Promise<void>((resolve) => {
        const queue = this.queues.get(key);
        if (queue) queue.push(resolve);
        else this.queues.set(key, [resolve]);
      });
      this.waitingCount--;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(key);
    };
  }

  private release(key: string): void {
    const queue = this.queues.get(key);
    const next = queue?.shift();
    if (queue && queue.length === 0) this.queues.delete(key);
    if (next) return next();
    const running = (this.active.get(key) ?? 1) - 1;
    if (running === 0) this.active.delete(key);
    else this.active.set(key, running);
  }
}

function destinationKey(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
