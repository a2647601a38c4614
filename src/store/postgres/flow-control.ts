import { claimTime } from "../claim-clock.js";
import { ClaimDestinations, type DestinationShares } from "../../domain/destination.js";
import * as claimRules from "../../domain/flow-claim.js";
import { nextWakeAt } from "../../domain/flow-window.js";
import type { FlowControl, Message, NewMessage } from "../../domain/message.js";
import { type FlowKeyRow, flowKeyStateOf, leasedTo } from "../rows-shared.js";
import type { PgContext } from "./context.js";
import * as sql from "./flow-control-sql.js";
import { mayHoldShare } from "./flow-fast-path.js";
import { type MessageRow, messageFromRow } from "./rows.js";
import type { Tx } from "./write-batcher.js";

/**
 * Flow control inside the PostgreSQL claim (docs/flow-control.md): this file locks, loads and applies; which
 * candidates start, park or wake is decided in src/domain/flow-claim.ts, as on SQLite. The decisions are exact with
 * several nodes thanks to row locks. What moves rows INTO ACTIVE holds the account's `flow_accounts` row
 * lock (and, for a keyed row, its `flow_keys` row lock): the claim (`FOR UPDATE`, waiting) and the publish fast path
 * (`SKIP LOCKED`, never waiting: a busy account sends the message through the claim). Under those locks the
 * deliveries in flight are COUNTED from the ACTIVE rows, in a statement that starts after the locks were granted, so
 * its snapshot includes every start committed before; nobody else can add one until this transaction ends. Rows
 * leaving ACTIVE meanwhile (a finish in progress) are still counted: the count can only be too high, never too low.
 * An account's count also holds the unused part of every node's share of its bound (migration 067): a node's publish
 * fast path starts deliveries from its share under the lock of its own share row, not the account's. A claim takes
 * its own node's shares after the accounts' rows and adds what it starts to them (docs/postgres.md "Shares of the
 * global bound").
 *
 * Lock order, everywhere: message rows (claimed with SKIP LOCKED, never waited for), then flow_accounts rows sorted by
 * account, then flow_keys rows sorted by (account, key). The claim takes the rows it foresees in that order, waiting;
 * a row it only meets later (a candidate of another account or key) is taken with SKIP LOCKED, and its candidates
 * are left for the next claim when it is busy, so a claim never waits out of order.
 *
 * Waking (trigger `ferry_flow_wake` of migration 005, fired by every row leaving ACTIVE: finishes of any outcome,
 * rescued leases, cancels): a slot freed must not be missed by a claim that, at the same moment, counted the
 * finishing row as still in flight and parked messages. For a key with a parallelism limit the trigger always updates
 * the key's row (re-reading `wake_at` after any claim holding the row committed, or making the claim wait for this
 * transaction and count without the row), so one of the two sees the other. For the account, taking its row lock in
 * every finish would serialise all finishes of an account on every node behind its claims; the trigger only touches
 * the account's row while messages wait for the global bound (`wake_at` set), and the claim that parks the first ones
 * (the only moment a finish can miss it) looks again after FIRST_PARK_RECHECK_MS instead of FLOW_RECHECK_MS. A woken
 * wait list gets wake time 0: due at once whatever the clock of the node that claims next.
 */

/** Re-check of an account whose global wait list this claim started (see above). (Default: 1 s) */
const FIRST_PARK_RECHECK_MS = 1000;

interface KeySlot extends claimRules.ClaimKey {
  accountId: string;
  key: string;
  /** It has a wait list to look at (wake_at set when locked), not yet looked at by this claim. */
  pending: boolean;
}

interface AccountSlot extends claimRules.ClaimAccount {
  /** Messages already waited for the global bound when this claim locked the row. */
  hadWaiting: boolean;
  /** Its global wait list is still to be looked at by this claim. */
  pending: boolean;
  waking: boolean;
}

const slotKey = (accountId: string, key: string) => `${accountId}\u0000${key}`;

/** One claim transaction: the locked flow rows, their counts, and the decisions taken. */
class ClaimRun {
  readonly keys = new Map<string, KeySlot>();
  readonly accounts = new Map<string, AccountSlot>();
  /** Accounts whose share this node holds (migration 067), with the deliveries this claim started for them. */
  private readonly ownShares = new Map<string, number>();

  constructor(
    private readonly tx: Tx,
    /** The claim's time; moved forward once the locks are held (see flowClaim). */
    public now: number,
    /** The node claiming: the lease owner of what it starts. */
    private readonly owner: string,
  ) {}

  /**
   * Locks the flow rows of these accounts, then keys (in that order), creating missing ones, and counts their
   * deliveries in flight. `skip`: take only the rows nobody else holds (never wait). A key is only taken once its
   * account is held. Rows already held by this claim are not asked for again.
   */
  async acquire(accountIds: string[], keys: { accountId: string; key: string; config?: FlowControl }[], skip: boolean) {
    const { tx, now } = this;
    const newAccounts = [...new Set(accountIds)].filter((id) => !this.accounts.has(id));
    const accountRows: { account_id: string; wake_at: number | null; plan: string | null }[] = [];
    if (newAccounts.length > 0) {
      accountRows.push(...(await tx.query<(typeof accountRows)[number]>(sql.lockAccounts(skip), [newAccounts])));
      const missing = newAccounts.filter((id) => !accountRows.some((r) => r.account_id === id));
      if (missing.length > 0) {
        await tx.execute(sql.ensureAccounts, [missing]);
        accountRows.push(...(await tx.query<(typeof accountRows)[number]>(sql.lockAccounts(skip), [missing])));
      }
    }
    // This node's shares of those accounts, after their rows (the fast path takes them in the same order): a
    // publish run of this node that holds one counts the deliveries started here only once this claim committed.
    // An account whose share stays busy is left alone by this claim.
    const shared = accountRows.filter((r) => mayHoldShare(this.owner, r.account_id)).map((r) => r.account_id);
    if (shared.length > 0) {
      const busy = new Set(
        (await tx.query<{ account_id: string }>(sql.lockOwnShares, [shared, this.owner, !skip])).map((r) => r.account_id),
      );
      for (const id of shared) if (!busy.has(id)) this.ownShares.set(id, this.ownShares.get(id) ?? 0);
      if (busy.size > 0) accountRows.splice(0, accountRows.length, ...accountRows.filter((r) => !busy.has(r.account_id)));
    }
    const held = (accountId: string) =>
      this.accounts.has(accountId) || accountRows.some((r) => r.account_id === accountId);
    const wantedKeys = new Map<string, (typeof keys)[number]>();
    for (const k of keys) {
      const id = slotKey(k.accountId, k.key);
      const prev = wantedKeys.get(id);
      if (!this.keys.has(id) && held(k.accountId) && (!prev || (!prev.config && k.config))) wantedKeys.set(id, k);
    }
    const keyRows: FlowKeyRow<boolean>[] = [];
    if (wantedKeys.size > 0) {
      const list = [...wantedKeys.values()];
      const ids = [list.map((k) => k.accountId), list.map((k) => k.key)];
      keyRows.push(...(await tx.query<FlowKeyRow<boolean>>(sql.lockKeys(skip), ids)));
      const found = new Set(keyRows.map((r) => slotKey(r.account_id, r.key)));
      const missing = list.filter((k) => k.config !== undefined && !found.has(slotKey(k.accountId, k.key)));
      if (missing.length > 0) {
        const c = missing.map((k) => k.config!);
        await tx.execute(sql.ensureKeys, [
          missing.map((k) => k.accountId),
          missing.map((k) => k.key),
          c.map((f) => f.parallelism ?? null),
          c.map((f) => f.rate ?? null),
          c.map((f) => f.periodSec),
          now,
        ]);
        const again = [missing.map((k) => k.accountId), missing.map((k) => k.key)];
        keyRows.push(...(await tx.query<FlowKeyRow<boolean>>(sql.lockKeys(skip), again)));
      }
    }
    if (accountRows.length === 0 && keyRows.length === 0) return;

    const counts = await tx.query<{ account_id: string; key: string | null; n: number }>(sql.countActive, [
      accountRows.map((r) => r.account_id),
      keyRows.map((r) => r.account_id),
      keyRows.map((r) => r.key),
      now,
    ]);
    const countOf = (accountId: string, key: string | null) =>
      counts.find((c) => c.account_id === accountId && c.key === key)?.n ?? 0;
    for (const r of accountRows) {
      this.accounts.set(r.account_id, {
        cap: claimRules.accountCap(r.plan),
        active: countOf(r.account_id, null),
        hadWaiting: r.wake_at !== null,
        pending: r.wake_at !== null,
        waking: false,
        parked: false,
      });
    }
    for (const r of keyRows) {
      this.keys.set(slotKey(r.account_id, r.key), {
        accountId: r.account_id,
        key: r.key,
        state: flowKeyStateOf(r),
        active: countOf(r.account_id, r.key),
        pending: r.wake_at !== null,
        dirty: false,
      });
    }
  }

  /**
   * Wait lists of the locked keys and accounts: release as many as there is room for, oldest first, so that they
   * go before newer candidates. Any wait list met is looked at, not only those whose wake time has come: a finish
   * that freed a slot sets the wake time to ITS clock reading, which may be later than this claim's `now` (the claim
   * may have waited for that finish's lock), and the slot it freed must still go to the oldest waiting message.
   * True when rows were released.
   */
  async wake(): Promise<boolean> {
    const rooms: { accountId: string; key: string | null; room: number }[] = [];
    for (const slot of this.keys.values()) {
      if (!slot.pending) continue;
      slot.pending = false;
      slot.dirty = true; // its wake time is recomputed at the end
      const room = claimRules.keyReleaseRoom(slot, this.now);
      if (room > 0) rooms.push({ accountId: slot.accountId, key: slot.key, room });
    }
    for (const [accountId, slot] of this.accounts) {
      if (!slot.pending) continue;
      slot.pending = false;
      slot.waking = true;
      const room = claimRules.accountReleaseRoom(slot);
      if (room > 0) rooms.push({ accountId, key: null, room });
    }
    if (rooms.length === 0) return false;
    const released = await this.tx.execute(sql.release, [
      rooms.map((r) => r.accountId),
      rooms.map((r) => r.key),
      rooms.map((r) => r.room),
    ]);
    // Released rows this claim does not start are due now for every node.
    if (released > 0) this.tx.notifyDue();
    return released > 0;
  }

  /**
   * Claims up to `limit` admissible candidates: every candidate either starts, waits, or is left to another claim.
   * A candidate whose destination has no room on this node (`destinations`) is left due, untouched.
   */
  async claim(limit: number, owner: string, leaseUntil: number, destinations: ClaimDestinations): Promise<Message[]> {
    const { tx, now } = this;
    const started: Message[] = [];
    const leftAlone: number[] = [];
    const scanBudget = claimRules.claimScanBudget(limit);
    let scanned = 0;
    while (started.length < limit && scanned < scanBudget) {
      const want = limit - started.length;
      const skip = destinations.skipKeys;
      const rows = await tx.query<MessageRow>(
        sql.candidates(skip.length > 0),
        skip.length > 0 ? [now, want, leftAlone, skip] : [now, want, leftAlone],
      );
      if (rows.length === 0) break;
      scanned += rows.length;
      // Rows met for the first time now are only taken if free: waiting here could deadlock (see the top).
      await this.acquire(
        rows.map((r) => r.account_id),
        rows.flatMap((r) => {
          if (r.flow_key === null) return [];
          const fc = (JSON.parse(r.spec) as NewMessage["spec"]).flowControl;
          return [{ accountId: r.account_id, key: r.flow_key, ...(fc ? { config: fc } : {}) }];
        }),
        true,
      );
      // Wait lists of rows met just now go first: released, they are older than these candidates; select again.
      if (await this.wake()) continue;
      const decided: { row: MessageRow; reason: "key" | "global" | null }[] = [];
      for (const row of rows) {
        if (!destinations.hasRoom(row.url)) {
          if (!destinations.isSkipped(row.url)) leftAlone.push(row.seq);
          continue;
        }
        const account = this.accounts.get(row.account_id);
        const slot = row.flow_key === null ? undefined : this.keys.get(slotKey(row.account_id, row.flow_key));
        if (!account || (row.flow_key !== null && !slot)) {
          leftAlone.push(row.seq);
          continue;
        }
        const decision = claimRules.decideCandidate(account, slot, now);
        decided.push({ row, reason: decision === "start" ? null : decision });
        if (decision === "start") destinations.take(row.url);
      }
      if (decided.length > 0) {
        await tx.execute(sql.apply, [decided.map((d) => d.row.seq), decided.map((d) => d.reason), owner, leaseUntil]);
      }
      for (const { row, reason } of decided) {
        if (reason !== null) continue;
        started.push(leasedTo(messageFromRow(row), owner, leaseUntil));
        const ownShare = this.ownShares.get(row.account_id);
        if (ownShare !== undefined) this.ownShares.set(row.account_id, ownShare + 1);
      }
      if (rows.length < want) break;
    }
    return started;
  }

  /** Persists windows and the next wake time of every key and account looked at, and this node's shares' use. */
  async save(): Promise<void> {
    const { tx, now } = this;
    const started = [...this.ownShares.entries()].filter(([, n]) => n > 0);
    if (started.length > 0) {
      await tx.execute(sql.addToOwnShares, [started.map(([id]) => id), this.owner, started.map(([, n]) => n)]);
    }
    const keys = [...this.keys.values()].filter((s) => s.dirty);
    if (keys.length > 0) {
      await tx.execute(sql.saveKeys, [
        keys.map((s) => s.accountId),
        keys.map((s) => s.key),
        keys.map((s) => s.state.rateCount),
        keys.map((s) => s.state.periodStart),
        keys.map((s) => nextWakeAt(s.state, now) ?? null),
      ]);
    }
    const accounts = [...this.accounts.entries()].filter(([, s]) => s.waking || s.parked);
    if (accounts.length > 0) {
      await tx.execute(sql.saveAccounts, [
        accounts.map(([id]) => id),
        accounts.map(([, s]) => s.parked),
        accounts.map(([, s]) => claimRules.accountWakeAt(now, s.parked && !s.hadWaiting, FIRST_PARK_RECHECK_MS)),
      ]);
    }
  }
}

/** The claim: wake due wait lists, then lease up to `limit` admissible due messages to `owner`. */
export async function flowClaim(
  tx: Tx,
  p: {
    now: number;
    limit: number;
    owner: string;
    leaseUntil: number;
    liveClockOffsetMs?: number;
    destinations?: DestinationShares;
  },
): Promise<{ messages: Message[]; startedAt: number }> {
  const run = new ClaimRun(tx, p.now, p.owner);
  const destinations = new ClaimDestinations(p.destinations);
  // Foresee the rows this claim needs (due wait lists and the first candidates) and lock them in order, waiting.
  // The survey does not walk past destinations at their share (a walk more per claim): rows it did not foresee are
  // locked with SKIP LOCKED when met, as any row met late.
  const seen = await tx.query<{ kind: string; account_id: string; key: string | null }>(sql.survey, [p.now, p.limit]);
  if (seen.length === 0) return { messages: [], startedAt: p.now };
  await run.acquire(
    seen.map((s) => s.account_id),
    seen.flatMap((s) => (s.key === null ? [] : [{ accountId: s.account_id, key: s.key }])),
    false,
  );
  // The wait for those locks can be long (another node's claim holds them, or the batch queued behind others):
  // windows opened by this claim start now, when its deliveries go out. Otherwise the next window could open less
  // than a period after them, and a destination would see two windows' worth within one period.
  run.now = Math.max(run.now, claimTime(p));
  await run.wake();
  const messages = await run.claim(p.limit, p.owner, p.leaseUntil, destinations);
  await run.save();
  return { messages, startedAt: run.now };
}

/** Earliest time a wait list may move again, to arm the dispatcher's timer. */
export async function flowNextWakeAt(ctx: PgContext): Promise<number | undefined> {
  const [row] = await ctx.query<{ t: number | null }>({
    name: "ferry_flow_next_wake",
    text: `SELECT LEAST((SELECT min(wake_at) FROM flow_keys WHERE wake_at IS NOT NULL),
      (SELECT min(wake_at) FROM flow_accounts WHERE wake_at IS NOT NULL)) AS t`,
  });
  return row?.t ?? undefined;
}
