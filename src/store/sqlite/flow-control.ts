import type Database from "better-sqlite3";
import { ClaimDestinations, type DestinationShares } from "../../domain/destination.js";
import * as claimRules from "../../domain/flow-claim.js";
import { type FlowLimits, mergeConfig, nextWakeAt, sameLimits } from "../../domain/flow-window.js";
import type { Message, NewMessage } from "../../domain/message.js";
import { type FlowKeyRow as SharedFlowKeyRow, flowKeyStateOf, leasedTo } from "../rows-shared.js";
import { type MessageRow, messageFromRow } from "./rows.js";

/**
 * Flow control inside the SQLite claim (docs/flow-control.md): this file locks (the write transaction), loads,
 * and applies; which candidates start, park or wake is decided in src/domain/flow-claim.ts. Everything here runs
 * synchronously inside a write transaction (`ctx.write`), so the counts it reads cannot change under it:
 * - a candidate with a flow-control key starts only if the key is not paused, fewer than `parallelism` of the key's
 *   rows are ACTIVE, and fewer than `rate` started in the current window; otherwise it moves to WAITING
 *   (`wait_reason = 'key'`), out of the claim's way;
 * - any candidate starts only if its account has fewer than max_global_parallelism ACTIVE rows (kept by triggers in
 *   `flow_accounts.active`); otherwise it moves to WAITING (`wait_reason = 'global'`);
 * - a key or account whose wait list may move again carries a `wake_at`; the claim first releases (oldest first)
 *   as many waiting rows as there is room for, then claims as usual. Finishing deliveries, resume, reset, pin and
 *   configuration changes set `wake_at` to now; a used-up rate window sets it to the window's end.
 * PostgreSQL: the same steps with `FOR UPDATE` on the flow_keys and flow_accounts rows of the candidates, which
 * serialises every start of a key (starts only happen in the claim) while other keys proceed in parallel.
 */

/** A `flow_keys` row as better-sqlite3 returns it (flags 0/1). */
export type FlowKeyRow = SharedFlowKeyRow<number>;

interface AccountFlowRow {
  plan: string | null;
  active: number | null;
  wake_at: number | null;
}

interface KeySlot extends claimRules.ClaimKey {
  accountId: string;
  key: string;
}

interface AccountSlot extends claimRules.ClaimAccount {
  waking: boolean;
}

export interface FlowEngine {
  /** Publish fast path: may this message be inserted already ACTIVE? (no key, account under its global bound). */
  fastPathAllowed(m: NewMessage): boolean;
  /** Records a message's key configuration (unless pinned); called for every inserted row. */
  noteInsert(m: NewMessage): void;
  /**
   * The claim: wake due wait lists, then lease up to `limit` admissible due messages to `owner`, none to a
   * destination whose share of the node is used up (`destinations`, src/domain/destination.ts).
   */
  claim(p: {
    now: number;
    limit: number;
    owner: string;
    leaseUntil: number;
    destinations?: DestinationShares;
  }): Message[];
  /** A message left ACTIVE: wake its key's and its account's wait lists if they have any. */
  afterFinish(m: Message, now: number): void;
  /** Earliest time a wait list may move again, to arm the dispatcher's timer. */
  nextWakeAt(): number | undefined;
  getKey(accountId: string, key: string): FlowKeyRow | undefined;
  countActive(accountId: string, key: string): number;
  countWaiting(accountId: string, key: string): number;
}

/**
 * claimKeyOf (src/domain/destination.ts) in SQL: the URL up to the first "/" from its ninth character on. Built from
 * substr and instr only, so it costs little per row walked.
 */
export const DESTINATION_KEY_SQL =
  "(CASE WHEN instr(substr(url, 9), '/') > 0 THEN substr(url, 1, instr(substr(url, 9), '/') + 7) ELSE url END)";

const engines = new WeakMap<Database.Database, FlowEngine>();

/** One engine per connection: the statements are prepared once and shared by the message and flow queries. */
export function flowEngine(db: Database.Database): FlowEngine {
  let engine = engines.get(db);
  if (!engine) {
    engine = createEngine(db);
    engines.set(db, engine);
  }
  return engine;
}

function createEngine(db: Database.Database): FlowEngine {
  const keyGet = db.prepare("SELECT * FROM flow_keys WHERE account_id = ? AND key = ?");
  const keyInsert = db.prepare(
    `INSERT INTO flow_keys (account_id, key, parallelism, rate, period_sec, created_at)
     VALUES (@accountId, @key, @parallelism, @rate, @periodSec, @now)`,
  );
  const keyConfigure = db.prepare(
    `UPDATE flow_keys SET parallelism = @parallelism, rate = @rate, period_sec = @periodSec,
       wake_at = CASE WHEN wake_at IS NULL OR wake_at > @now THEN @now ELSE wake_at END
     WHERE account_id = @accountId AND key = @key`,
  );
  const keySaveWindow = db.prepare(
    `UPDATE flow_keys SET rate_count = @rateCount, period_start = @periodStart, wake_at = @wakeAt
     WHERE account_id = @accountId AND key = @key`,
  );
  const keysDue = db.prepare(
    `SELECT * FROM flow_keys WHERE wake_at <= ? ORDER BY wake_at LIMIT ${claimRules.WAKE_BATCH}`,
  );
  const keyWakeIfWaiting = db.prepare(
    `UPDATE flow_keys SET wake_at = @now
     WHERE account_id = @accountId AND key = @key AND (wake_at IS NULL OR wake_at > @now)
       AND EXISTS (SELECT 1 FROM messages WHERE state = 'WAITING' AND account_id = @accountId AND flow_key = @key
                   AND wait_reason = 'key')`,
  );
  const activeOfKey = db.prepare(
    "SELECT COUNT(*) AS n FROM messages WHERE state = 'ACTIVE' AND account_id = ? AND flow_key = ?",
  );
  const waitingOfKey = db.prepare(
    "SELECT COUNT(*) AS n FROM messages WHERE state = 'WAITING' AND account_id = ? AND flow_key = ?",
  );
  const keyHasWaiting = db.prepare(
    `SELECT 1 AS x FROM messages WHERE state = 'WAITING' AND account_id = ? AND flow_key = ? AND wait_reason = 'key'
     LIMIT 1`,
  );
  const releaseKey = db.prepare(
    `UPDATE messages SET state = CASE WHEN retried > 0 THEN 'RETRY' ELSE 'CREATED' END, wait_reason = NULL
     WHERE seq IN (SELECT seq FROM messages WHERE state = 'WAITING' AND account_id = ? AND flow_key = ?
                   AND wait_reason = 'key' ORDER BY seq LIMIT ?)`,
  );

  const accountGet = db.prepare(
    `SELECT a.plan AS plan, f.active AS active, f.wake_at AS wake_at
     FROM (SELECT ? AS id) q LEFT JOIN accounts a ON a.id = q.id LEFT JOIN flow_accounts f ON f.account_id = q.id`,
  );
  const accountsDue = db.prepare(
    `SELECT account_id FROM flow_accounts WHERE wake_at <= ? ORDER BY wake_at LIMIT ${claimRules.WAKE_BATCH}`,
  );
  const accountSetWake = db.prepare(
    `INSERT INTO flow_accounts (account_id, wake_at) VALUES (?, ?)
     ON CONFLICT (account_id) DO UPDATE SET wake_at = excluded.wake_at`,
  );
  // Runs after every delivery: positional parameters (rows.ts `messageValues` says why): now, account id, now.
  const accountWake = db.prepare("UPDATE flow_accounts SET wake_at = ? WHERE account_id = ? AND wake_at > ?");
  const accountHasWaiting = db.prepare(
    "SELECT 1 AS x FROM messages WHERE state = 'WAITING' AND wait_reason = 'global' AND account_id = ? LIMIT 1",
  );
  const releaseGlobal = db.prepare(
    `UPDATE messages SET state = CASE WHEN retried > 0 THEN 'RETRY' ELSE 'CREATED' END, wait_reason = NULL
     WHERE seq IN (SELECT seq FROM messages WHERE state = 'WAITING' AND wait_reason = 'global' AND account_id = ?
                   ORDER BY seq LIMIT ?)`,
  );

  // Same text as the foundation's claim, so the planner uses the partial index messages_due.
  const candidates = db.prepare(
    "SELECT * FROM messages WHERE state IN ('CREATED', 'RETRY') AND due_at <= ? ORDER BY due_at LIMIT ?",
  );
  // The same, past the rows of destinations whose share of this node is used up (docs/reliability.md "Isolation"):
  // still one walk of messages_due in due order, filtered by a prefix of the URL and by the rows left alone.
  const candidatesSkipping = db.prepare(
    `SELECT * FROM messages WHERE state IN ('CREATED', 'RETRY') AND due_at <= ?
       AND ${DESTINATION_KEY_SQL} NOT IN (SELECT value FROM json_each(?)) AND seq NOT IN (SELECT value FROM json_each(?))
     ORDER BY due_at LIMIT ?`,
  );
  const admit = db.prepare(
    `UPDATE messages SET state = 'ACTIVE', lease_owner = ?, lease_until = ?
     WHERE seq IN (SELECT value FROM json_each(?))`,
  );
  const park = db.prepare(
    "UPDATE messages SET state = 'WAITING', wait_reason = ? WHERE seq IN (SELECT value FROM json_each(?))",
  );
  const minKeyWake = db.prepare("SELECT MIN(wake_at) AS t FROM flow_keys WHERE wake_at IS NOT NULL");
  const minAccountWake = db.prepare("SELECT MIN(wake_at) AS t FROM flow_accounts WHERE wake_at IS NOT NULL");

  const count = (stmt: Database.Statement, ...args: unknown[]) => (stmt.get(...args) as { n: number }).n;
  const slotKey = (accountId: string, key: string) => `${accountId}\u0000${key}`;

  const accountInfo = (accountId: string): AccountFlowRow => accountGet.get(accountId) as AccountFlowRow;

  function insertKey(m: NewMessage): FlowKeyRow {
    const fc = m.spec.flowControl!;
    keyInsert.run({
      accountId: m.accountId,
      key: fc.key,
      parallelism: fc.parallelism ?? null,
      rate: fc.rate ?? null,
      periodSec: fc.periodSec,
      now: m.createdAt,
    });
    return keyGet.get(m.accountId, fc.key) as FlowKeyRow;
  }

  function noteInsert(m: NewMessage): void {
    const fc = m.spec.flowControl;
    if (!fc) return;
    const row = keyGet.get(m.accountId, fc.key) as FlowKeyRow | undefined;
    if (!row) {
      insertKey(m);
      return;
    }
    const current = flowKeyStateOf(row);
    const next: FlowLimits = mergeConfig(current, fc, {
      pinnedParallelism: row.pinned_parallelism === 1,
      pinnedRate: row.pinned_rate === 1,
    });
    if (sameLimits(current, next)) return;
    // A new configuration may make room for waiting messages: the next claim looks at the key.
    keyConfigure.run({
      accountId: m.accountId,
      key: fc.key,
      parallelism: next.parallelism ?? null,
      rate: next.rate ?? null,
      periodSec: next.periodSec,
      now: m.createdAt,
    });
  }

  function fastPathAllowed(m: NewMessage): boolean {
    if (m.spec.flowControl) return false;
    const a = accountInfo(m.accountId);
    // Messages already waiting for the global bound go first: no overtaking through the fast path.
    return claimRules.fastPathRoom({ plan: a.plan, waiting: a.wake_at !== null, active: a.active ?? 0 }) > 0;
  }

  function claim(p: {
    now: number;
    limit: number;
    owner: string;
    leaseUntil: number;
    destinations?: DestinationShares;
  }): Message[] {
    const { now, limit, owner, leaseUntil } = p;
    const destinations = new ClaimDestinations(p.destinations);
    const leftAlone: number[] = [];
    const keys = new Map<string, KeySlot>();
    const accounts = new Map<string, AccountSlot>();

    const accountSlot = (accountId: string): AccountSlot => {
      let slot = accounts.get(accountId);
      if (!slot) {
        const a = accountInfo(accountId);
        slot = {
          cap: claimRules.accountCap(a.plan),
          active: a.active ?? 0,
          waking: false,
          parked: false,
        };
        accounts.set(accountId, slot);
      }
      return slot;
    };
    const keySlot = (accountId: string, key: string, row: FlowKeyRow | MessageRow): KeySlot => {
      const id = slotKey(accountId, key);
      let slot = keys.get(id);
      if (!slot) {
        // A message inserted by a path that did not record its key still gets one, from its own configuration.
        const r =
          "period_sec" in row
            ? row
            : ((keyGet.get(accountId, key) as FlowKeyRow | undefined) ?? insertKey(messageFromRow(row)));
        slot = { accountId, key, state: flowKeyStateOf(r), active: count(activeOfKey, accountId, key), dirty: false };
        keys.set(id, slot);
      }
      return slot;
    };

    // 1. Wait lists whose wake time has come: release as many as there is room for, oldest first.
    for (const r of keysDue.all(now) as FlowKeyRow[]) {
      const slot = keySlot(r.account_id, r.key, r);
      slot.dirty = true; // its wake time is recomputed below
      const room = claimRules.keyReleaseRoom(slot, now);
      if (room > 0) releaseKey.run(r.account_id, r.key, room);
    }
    for (const { account_id } of accountsDue.all(now) as { account_id: string }[]) {
      const slot = accountSlot(account_id);
      slot.waking = true;
      const room = claimRules.accountReleaseRoom(slot);
      if (room > 0) releaseGlobal.run(account_id, room);
    }

    // 2. Claim: every candidate either starts or moves to a wait list, so each round makes progress.
    const started: Message[] = [];
    const scanBudget = claimRules.claimScanBudget(limit);
    let scanned = 0;
    while (started.length < limit && scanned < scanBudget) {
      const want = limit - started.length;
      const skip = destinations.skipKeys;
      const rows = (
        skip.length === 0 && leftAlone.length === 0
          ? candidates.all(now, want)
          : candidatesSkipping.all(now, JSON.stringify(skip), JSON.stringify(leftAlone), want)
      ) as MessageRow[];
      if (rows.length === 0) break;
      scanned += rows.length;
      const admitted: MessageRow[] = [];
      const parkedKey: number[] = [];
      const parkedGlobal: number[] = [];
      for (const row of rows) {
        // A destination at its share stays due, untouched, for a claim with room (this node's later, or another's).
        if (!destinations.hasRoom(row.url)) {
          if (!destinations.isSkipped(row.url)) leftAlone.push(row.seq);
          continue;
        }
        const account = accountSlot(row.account_id);
        const slot = row.flow_key === null ? undefined : keySlot(row.account_id, row.flow_key, row);
        const decision = claimRules.decideCandidate(account, slot, now);
        if (decision === "key") parkedKey.push(row.seq);
        else if (decision === "global") parkedGlobal.push(row.seq);
        else {
          admitted.push(row);
          destinations.take(row.url);
        }
      }
      if (admitted.length > 0) admit.run(owner, leaseUntil, JSON.stringify(admitted.map((r) => r.seq)));
      if (parkedKey.length > 0) park.run("key", JSON.stringify(parkedKey));
      if (parkedGlobal.length > 0) park.run("global", JSON.stringify(parkedGlobal));
      for (const row of admitted) {
        started.push(leasedTo(messageFromRow(row), owner, leaseUntil));
      }
      if (rows.length < want) break;
    }

    // 3. Persist windows and the next wake time of every key and account looked at.
    for (const slot of keys.values()) {
      if (!slot.dirty) continue;
      const waiting = keyHasWaiting.get(slot.accountId, slot.key) !== undefined;
      keySaveWindow.run({
        accountId: slot.accountId,
        key: slot.key,
        rateCount: slot.state.rateCount,
        periodStart: slot.state.periodStart,
        wakeAt: waiting ? (nextWakeAt(slot.state, now) ?? null) : null,
      });
    }
    for (const [accountId, slot] of accounts) {
      if (!slot.waking && !slot.parked) continue;
      const waiting = slot.parked || accountHasWaiting.get(accountId) !== undefined;
      accountSetWake.run(accountId, waiting ? claimRules.accountWakeAt(now, false) : null);
    }
    return started;
  }

  function afterFinish(m: Message, now: number): void {
    const fc = m.spec.flowControl;
    if (fc) keyWakeIfWaiting.run({ accountId: m.accountId, key: fc.key, now });
    accountWake.run(now, m.accountId, now);
  }

  function nextWake(): number | undefined {
    const a = (minKeyWake.get() as { t: number | null }).t;
    const b = (minAccountWake.get() as { t: number | null }).t;
    if (a === null) return b ?? undefined;
    return b === null ? a : Math.min(a, b);
  }

  return {
    fastPathAllowed,
    noteInsert,
    claim,
    afterFinish,
    nextWakeAt: nextWake,
    getKey: (accountId, key) => keyGet.get(accountId, key) as FlowKeyRow | undefined,
    countActive: (accountId, key) => count(activeOfKey, accountId, key),
    countWaiting: (accountId, key) => count(waitingOfKey, accountId, key),
  };
}
