import { boundedMemo } from "./bounded-memo.js";

/**
 * Destinations, as the per-destination bound of a node sees them (docs/reliability.md, "Isolation"): one
 * destination is one scheme, host and port, the URL's origin. The claim skips a destination that already holds its
 * share of a node's attempts; it recognises the destination's rows in SQL by a prefix of their URL text
 * (`claimKeyOf`, the same function as the SQL expression DESTINATION_KEY_SQL of each dialect).
 */

/** The destination of a URL: its origin ("http://127.0.0.1:4000"); the text itself when it is not a URL. */
export const destinationOf = boundedMemo((url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
});

/**
 * The URL's text up to the first "/" from its ninth character on (the first "/" after "https://"), or the whole text.
 * Written so that SQL computes the same with substr and instr alone (sqlite/messages-claim-sql.ts and
 * postgres/flow-control-sql.ts, DESTINATION_KEY_SQL): no URL parser in the statement.
 */
export function claimKeyOf(url: string): string {
  const slash = url.indexOf("/", 8);
  return slash < 0 ? url : url.slice(0, slash);
}

/**
 * The key under which the claim can skip this URL's destination in SQL, or undefined. Only a URL whose key IS its
 * destination's origin qualifies ("http://host:port/…", written as the URL parser writes it): every URL with that
 * key then has that origin, so skipping the key never skips another destination. A URL written otherwise (upper
 * case, a default port, user info) is still bounded by the node's gate, but the claim leaves its row alone by id.
 */
export function skippableKeyOf(url: string): string | undefined {
  const key = claimKeyOf(url);
  return key === destinationOf(url) ? key : undefined;
}

/**
 * What the claim is told of the claiming node's destinations (Store.messageLeaseDue): a destination may hold at
 * most `share` attempts on the node, and `inUse` lists the destinations that hold some now.
 */
export interface DestinationShares {
  share: number;
  inUse: [destination: string, attempts: number][];
}

/**
 * One claim's bookkeeping of destination shares, the same in both dialects: which candidate rows may start, and the
 * keys the next candidate query skips. A destination whose share is used up is skipped for the rest of the claim.
 */
export class ClaimDestinations {
  private readonly used = new Map<string, number>();
  private readonly skipped = new Set<string>();

  constructor(private readonly shares: DestinationShares | undefined) {
    if (!shares) return;
    for (const [destination, attempts] of shares.inUse) {
      this.used.set(destination, attempts);
      // An origin is its own skippable key (see skippableKeyOf).
      if (attempts >= shares.share) this.skipped.add(destination);
    }
  }

  /** Keys the candidate query leaves out; empty: the claim's usual statement. */
  get skipKeys(): string[] {
    return [...this.skipped];
  }

  /**
   * Room for one more attempt to the destination of `url`. False when its share is used up: its key joins the keys
   * skipped when the URL is written plainly; otherwise the caller leaves the row alone by id.
   */
  hasRoom(url: string): boolean {
    if (!this.shares) return true;
    if ((this.used.get(destinationOf(url)) ?? 0) < this.shares.share) return true;
    const key = skippableKeyOf(url);
    if (key !== undefined) this.skipped.add(key);
    return false;
  }

  /** True when `hasRoom` said no and the key of `url` is skipped by the query (the row need not be left by id). */
  isSkipped(url: string): boolean {
    const key = skippableKeyOf(url);
    return key !== undefined && this.skipped.has(key);
  }

  /** Counts a started attempt to the destination of `url`. */
  take(url: string): void {
    if (!this.shares) return;
    const d = destinationOf(url);
    this.used.set(d, (this.used.get(d) ?? 0) + 1);
  }
}
