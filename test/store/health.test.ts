import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { logEntry } from "../../src/domain/log.js";
import type { Message, NewMessage } from "../../src/domain/message.js";
import type { Outcome } from "../../src/domain/records.js";
import type { Store } from "../../src/store/store.js";
import { adapters, type OpenedStore } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";

/**
 * The console's health read-outs (src/store/health-store.ts, docs/console.md "Health"): latencies of the deliveries
 * of a range (from the end of a delay), the destinations ranked by failed attempts with their newest failure, each
 * read bounded by its range and its limit, and one account's rows only.
 */
const account = anAccount("acc-health", { token: "t-health" });
const other = anAccount("acc-other", { token: "t-other" });
const OK = "http://127.0.0.1:9/ok";
const BAD = "http://127.0.0.1:9/bad";
const WORSE = "http://127.0.0.1:9/worse";

for (const adapter of adapters) {
  describe(`health read-outs: ${adapter.name}`, () => {
    let opened: OpenedStore;
    let store: Store;
    beforeEach(async () => {
      opened = await adapter.open();
      store = opened.store;
      await store.accountInsert({ account });
      await store.accountInsert({ account: other });
    });
    afterEach(() => opened.dispose());

    /** Publishes `m` at its `createdAt`, leases it at `leaseAt` and ends its attempt at `endAt` as `outcome`. */
    const attempt = async (m: NewMessage, leaseAt: number, endAt: number, outcome: Outcome, status: number | null) => {
      await store.messageInsertMany({ items: [{ message: m }], now: m.createdAt, dedupWindowMs: 0 });
      const [leased] = await store.messageLeaseDue({ now: leaseAt, limit: 1, owner: "A", leaseUntil: leaseAt + 60_000 });
      expect(leased?.id).toBe(m.id);
      const logs = [];
      if (outcome.kind === "delivered") logs.push(logEntry(leased!, "DELIVERED", endAt, { responseStatus: status! }));
      else {
        const error = status === null ? "connect ECONNREFUSED 127.0.0.1:9" : `destination answered ${status}`;
        const body = Buffer.from(`{"error":"down ${endAt}"}`).toString("base64");
        logs.push(logEntry(leased!, "ERROR", endAt, status === null ? { error } : { error, responseStatus: status, responseBody: body }));
        if (outcome.kind === "retry") logs.push(logEntry(leased!, "RETRY", endAt, { nextDeliveryTime: outcome.dueAt }));
        if (outcome.kind === "failed") logs.push(logEntry(leased!, "FAILED", endAt, { error, dlqId: outcome.dlqId }));
      }
      const finished = await store.messageFinish({ message: leased as Message, owner: "A", now: endAt, outcome, logs, newMessages: [] });
      expect(finished).toBe(true);
    };
    const delivered = (m: NewMessage, leaseAt: number, endAt: number) => attempt(m, leaseAt, endAt, { kind: "delivered" }, 200);

    it("measures publish→delivery of the range's deliveries, from the end of a requested delay, newest first", async () => {
      await delivered(aMessage(account.id, { url: OK, at: NOW }), NOW + 5, NOW + 40);
      // Published at NOW with a delay to NOW + 1000, delivered at NOW + 1100: 100 ms, not 1100.
      const delayed = { ...aMessage(account.id, { url: OK, at: NOW }), notBefore: NOW + 1000, dueAt: NOW + 1000 };
      await delivered(delayed, NOW + 1000, NOW + 1100);
      await delivered(aMessage(account.id, { url: OK, at: NOW + 2000 }), NOW + 2000, NOW + 2007);
      // Before the range, and another account's: not read.
      await delivered(aMessage(account.id, { url: OK, at: NOW - 90_000 }), NOW - 90_000, NOW - 80_000);
      await delivered(aMessage(other.id, { url: OK, at: NOW }), NOW + 3000, NOW + 3500);

      const read = (limit: number, from = NOW - 60_000, to = NOW + 60_000) =>
        store.deliveryLatencyList({ accountId: account.id, from, to, limit });
      expect(await read(100)).toEqual([7, 100, 40]);
      expect(await read(2)).toEqual([7, 100]);
      // The range is [from, to): a delivery at `to` is the next range's.
      expect(await read(100, NOW + 41, NOW + 2007)).toEqual([100]);
      expect(await store.deliveryLatencyList({ accountId: "nobody", from: 0, to: NOW * 2, limit: 10 })).toEqual([]);
    });

    it("ranks the destinations by failed attempts, then failed messages, with the newest failure's entry", async () => {
      // BAD: two failed attempts of one message (the second one final); WORSE: three attempts that will be retried.
      const bad = aMessage(account.id, { url: BAD, at: NOW, spec: { method: "POST", headers: {}, retries: 1 } });
      await attempt(bad, NOW + 1, NOW + 10, { kind: "retry", dueAt: NOW + 20 }, 500);
      const [again] = await store.messageLeaseDue({ now: NOW + 20, limit: 1, owner: "A", leaseUntil: NOW + 90_000 });
      const error = logEntry(again!, "ERROR", NOW + 30, { error: "destination answered 503", responseStatus: 503 });
      const failed = logEntry(again!, "FAILED", NOW + 30, { error: "destination answered 503", responseStatus: 503, dlqId: "dlq_1" });
      const response = { status: 503, headers: {}, body: Buffer.from("") };
      const outcome: Outcome = { kind: "failed", dlqId: "dlq_1", response };
      await store.messageFinish({ message: again!, owner: "A", now: NOW + 30, outcome, logs: [error, failed], newMessages: [] });
      for (let i = 0; i < 3; i++) {
        await attempt(aMessage(account.id, { url: WORSE, at: NOW + 100 + i }), NOW + 100 + i, NOW + 200 + i, { kind: "retry", dueAt: NOW + 10_000_000 }, null);
      }
      await delivered(aMessage(account.id, { url: OK, at: NOW }), NOW + 300, NOW + 301);
      // Outside the range, and another account's: not counted.
      await attempt(aMessage(account.id, { url: BAD, at: NOW - 90_000 }), NOW - 90_000, NOW - 89_000, { kind: "retry", dueAt: NOW + 10_000_000 }, 500);
      await attempt(aMessage(other.id, { url: OK, at: NOW }), NOW + 400, NOW + 401, { kind: "retry", dueAt: NOW + 10_000_000 }, 500);

      const read = (p: { scanLimit?: number; limit?: number } = {}) =>
        store.destinationFailureList({ accountId: account.id, from: NOW - 60_000, to: NOW + 60_000, scanLimit: p.scanLimit ?? 100, limit: p.limit ?? 10 });
      const all = await read();
      expect(all.scanned).toBe(6);
      expect(all.destinations.map((d) => [d.url, d.errors, d.failed])).toEqual([[WORSE, 3, 0], [BAD, 2, 1]]);
      const worse = all.destinations[0]!;
      expect(worse.last.time).toBe(NOW + 202);
      expect(JSON.parse(worse.last.details)).toEqual({ error: "connect ECONNREFUSED 127.0.0.1:9" });
      const last = all.destinations[1]!.last;
      expect([last.messageId, last.state, last.time]).toEqual([bad.id, "FAILED", NOW + 30]);
      expect(JSON.parse(last.details)).toMatchObject({ error: "destination answered 503", responseStatus: 503 });

      expect((await read({ limit: 1 })).destinations.map((d) => d.url)).toEqual([WORSE]);
      // The newest 2 failure entries only: BAD's last ERROR and FAILED at NOW + 30 are older than WORSE's.
      const capped = await read({ scanLimit: 2 });
      expect(capped.scanned).toBe(2);
      expect(capped.destinations.map((d) => [d.url, d.errors])).toEqual([[WORSE, 2]]);
    });

    it("reads through the indexes of migration 064", async () => {
      const plan = async (sql: string): Promise<string> => {
        if (opened.dialect === "sqlite") {
          const rows = await opened.sql<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, [account.id, 0, 1, 10]);
          return rows.map((r) => r.detail).join(" | ");
        }
        // PostgreSQL picks by statistics, and a table this small is read sequentially: with sequential scans off the
        // plan shows which index can serve the query.
        const client = new pg.Client({ connectionString: opened.location, options: "-c enable_seqscan=off" });
        await client.connect();
        try {
          const rows = (await client.query(`EXPLAIN ${sql}`, [account.id, 0, 1, 10])).rows as { "QUERY PLAN": string }[];
          return rows.map((r) => r["QUERY PLAN"]).join(" | ");
        } finally {
          await client.end();
        }
      };
      expect(
        await plan("SELECT finished_at FROM messages WHERE account_id = $1 AND state = 'DELIVERED' AND finished_at >= $2 AND finished_at < $3 ORDER BY finished_at DESC LIMIT $4"),
      ).toContain("messages_delivered");
      // Each dialect's condition as its index and its query write it (SQLite's without IN: src/store/sqlite/row-states.ts).
      const failed = opened.dialect === "sqlite" ? "(state = 'ERROR' OR state = 'FAILED')" : "state IN ('ERROR', 'FAILED')";
      expect(
        await plan(`SELECT seq FROM logs WHERE account_id = $1 AND ${failed} AND time >= $2 AND time < $3 ORDER BY time DESC LIMIT $4`),
      ).toContain("logs_failures");
    });
  });
}
