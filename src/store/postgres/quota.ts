import type { PgContext } from "./context.js";

const DAY_MS = 86_400_000;

/**
 * Adds `$3` requests to the account's row of the day unless the day's count would pass `$4`, in ONE statement:
 * the upsert takes the row lock, checks and adds, so two nodes consuming at once are applied one after the other
 * and max_requests_per_day holds exactly across nodes. No row comes back when the requests were refused (`$3 > $4`
 * proposes no row at all; otherwise the ON CONFLICT … WHERE refuses the update).
 */
const consumeSql = {
  name: "ferry_quota_consume",
  text: `INSERT INTO request_quota (account_id, day, used) SELECT $1::text, $2::int8, $3::int8
    WHERE $3::int8 <= $4::int8
    ON CONFLICT (account_id, day) DO UPDATE SET used = request_quota.used + excluded.used
    WHERE request_quota.used + excluded.used <= $4::int8
    RETURNING used`,
};
const usedSql = { name: "ferry_quota_used", text: "SELECT used FROM request_quota WHERE account_id = $1 AND day = $2" };
// Yesterday's row is kept (a node whose clock lags a little still finds it); older ones are dropped.
const trimSql = { name: "ferry_quota_trim", text: "DELETE FROM request_quota WHERE account_id = $1 AND day < $2" };

interface Request {
  n: number;
  resolve: (r: { allowed: boolean; used: number }) => void;
  reject: (error: unknown) => void;
}

interface Group {
  accountId: string;
  day: number;
  limit: number;
  requests: Request[];
}

/**
 * The daily request quota on PostgreSQL. Each statement runs on its own (autocommit), NOT in the group-commit
 * transaction: there the account's counter row would stay locked until the whole batch committed, every other
 * batch publishing for that account (on any node) would queue behind it, and two batches locking two accounts'
 * rows in opposite orders would deadlock. Here a row is locked for one statement and one commit only.
 *
 * So that one hot account does not pay one commit per publish, the calls of one event-loop turn for the same
 * account, day and limit are consumed together by one statement; only when they do not all fit (the limit is
 * near) are they consumed one by one, in arrival order, so each is still all-or-nothing.
 */
export class QuotaCounter {
  private groups = new Map<string, Group>();

  constructor(private readonly ctx: PgContext) {}

  consume(p: { accountId: string; day: number; n: number; limit: number }): Promise<{ allowed: boolean; used: number }> {
    return new Promise((resolve, reject) => {
      const key = `${p.accountId}\u0000${p.day}\u0000${p.limit}`;
      let group = this.groups.get(key);
      if (!group) {
        group = { accountId: p.accountId, day: p.day, limit: p.limit, requests: [] };
        this.groups.set(key, group);
        const scheduled = group;
        setImmediate(() => {
          this.groups.delete(key);
          void this.flush(scheduled);
        });
      }
      group.requests.push({ n: p.n, resolve, reject });
    });
  }

  private async flush(g: Group): Promise<void> {
    try {
      const total = g.requests.reduce((sum, r) => sum + r.n, 0);
      const used = await this.add(g, total);
      if (used !== undefined) {
        // Every request fits: each one's count afterwards is the day's count before the group plus its prefix.
        let count = used - total;
        for (const r of g.requests) r.resolve({ allowed: true, used: (count += r.n) });
        return;
      }
      for (const r of g.requests) {
        const added = g.requests.length === 1 ? undefined : await this.add(g, r.n);
        if (added !== undefined) r.resolve({ allowed: true, used: added });
        else r.resolve({ allowed: false, used: await this.used(g) });
      }
    } catch (error) {
      for (const r of g.requests) r.reject(error);
    }
  }

  /** The day's count after adding `n`, or undefined when `n` did not fit. */
  private async add(g: Group, n: number): Promise<number | undefined> {
    const [row] = await this.ctx.query<{ used: number }>(consumeSql, [g.accountId, g.day, n, g.limit]);
    if (!row) return undefined;
    // The count equals what was just added only when this statement created the day's row: once per account and
    // day (on one node), the older rows are dropped.
    if (row.used === n) await this.ctx.query(trimSql, [g.accountId, g.day - DAY_MS]);
    return row.used;
  }

  private async used(g: Group): Promise<number> {
    const [row] = await this.ctx.query<{ used: number }>(usedSql, [g.accountId, g.day]);
    return row?.used ?? 0;
  }
}
