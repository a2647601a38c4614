import { AppError } from "../errors.js";
import type { SearchUsageKind } from "../store/search-document-store.js";
import type { Store } from "../store/store.js";
import { timerDelay } from "../domain/timers.js";

/**
 * Per-index operation counters of the search data plane (daily updates and queries, monthly reranks,
 * throughput_vector). A query must not wait for an fsync to be counted, so counts are buffered here and written
 * to the store once a second (and when the server closes): the limits read the store's sum plus what is buffered.
 * A crash loses at most the last second of counts; several nodes may overshoot a limit by what each buffered.
 */
const FLUSH_MS = 1000;

interface Pending {
  indexId: string;
  kind: SearchUsageKind;
  minute: number;
  n: number;
}

export class SearchUsage {
  private pending = new Map<string, Pending>();
  /** Counts a flush is writing: still shown by the stats until the store has them. */
  private writing: Pending[] = [];
  /** Set while a flush waits or runs: limit checks wait for it. */
  private flushGate: Promise<void> | undefined;
  /** Reads in progress (see `consistently`): a flush waits for them. */
  private checking = 0;
  private checksDone: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly store: Store) {}

  /** What is counted but not yet written, for `indexId` and `kind` since `since`. */
  buffered(indexId: string, kind: SearchUsageKind, since: number): number {
    let n = 0;
    for (const p of [...this.pending.values(), ...this.writing]) {
      if (p.indexId === indexId && p.kind === kind && p.minute >= since) n += p.n;
    }
    return n;
  }

  /** Per-minute operations buffered for `indexId` (bytes excluded), to merge into a throughput series. */
  bufferedMinutes(indexId: string): { minute: number; n: number }[] {
    return [...this.pending.values(), ...this.writing]
      .filter((p) => p.indexId === indexId && p.kind !== "bandwidth")
      .map((p) => ({ minute: p.minute, n: p.n }));
  }

  /** Counts `n` operations unless the sum since `since` would pass `limit` (-1: none): then a 429 naming it. */
  async take(
    p: { indexId: string; kind: SearchUsageKind; n: number; now: number; since: number; limit: number },
    limitName: string,
  ): Promise<void> {
    if (p.limit < 0) return this.add(p.indexId, p.kind, p.n, p.now);
    await this.consistently(async () => {
      const used =
        (await this.store.searchUsageSum({ indexId: p.indexId, kind: p.kind, since: p.since })) +
        this.buffered(p.indexId, p.kind, p.since);
      if (used + p.n > p.limit) throw new AppError("rate_limited", `${limitName} exceeded: ${used} used of ${p.limit}`);
      this.add(p.indexId, p.kind, p.n, p.now);
    });
  }

  /**
   * Runs `read`, which adds the store's counts to the buffer's, while no flush moves counts from one to the other.
   * A flush's write is visible in the store before its promise resolves (that waits for the fsync), and until then
   * the counts are still listed as being written: read in that window, they would count twice (or, read the other
   * way round, not at all). So a read waits for a flush in progress, and a flush waits for the reads in progress.
   * Limit checks (`take`) and the management API's statistics read through here.
   */
  async consistently<T>(read: () => Promise<T>): Promise<T> {
    while (this.flushGate) await this.flushGate;
    this.checking++;
    try {
      return await read();
    } finally {
      if (--this.checking === 0) this.checksDone?.();
    }
  }

  /** Adds (or, negative, takes back) operations without a limit. */
  add(indexId: string, kind: SearchUsageKind, n: number, now: number): void {
    const minute = now - (now % 60_000);
    const key = `${indexId}\0${kind}\0${minute}`;
    const p = this.pending.get(key);
    if (p) p.n += n;
    else this.pending.set(key, { indexId, kind, minute, n });
    this.timer ??= setTimeout(() => void this.flush(), timerDelay(FLUSH_MS)).unref();
  }

  /** Writes what is buffered; a failed write puts its counts back for the next flush. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      let open!: () => void;
      this.flushGate = new Promise<void>((resolve) => (open = resolve));
      try {
        if (this.checking > 0) await new Promise<void>((resolve) => (this.checksDone = resolve));
        this.checksDone = undefined;
        await this.writeBuffered();
      } finally {
        this.flushGate = undefined;
        open();
      }
    });
    return this.flushing;
  }

  private async writeBuffered(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    this.writing = batch;
    for (const p of batch) {
      if (p.n !== 0) {
        try {
          await this.store.searchUsageConsume({
            indexId: p.indexId,
            kind: p.kind,
            n: p.n,
            now: p.minute,
            since: p.minute,
            limit: -1,
          });
        } catch {
          this.add(p.indexId, p.kind, p.n, p.minute);
        }
      }
      // Written, or back in `pending`: from now on the store's sum or `pending` counts it.
      this.writing = this.writing.filter((w) => w !== p);
    }
  }
}

/** One buffer per store: the data plane and the management API's stats read the same counts. */
const buffers = new WeakMap<Store, SearchUsage>();
export function searchUsage(store: Store): SearchUsage {
  let usage = buffers.get(store);
  if (!usage) buffers.set(store, (usage = new SearchUsage(store)));
  return usage;
}
