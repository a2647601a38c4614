import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claimKeyOf, skippableKeyOf } from "../../src/domain/destination.js";
import { wakeOnLeavingActive } from "../../src/domain/flow-claim.js";
import { DESTINATION_KEY_SQL as PG_DESTINATION_KEY } from "../../src/store/postgres/flow-control-sql.js";
import { DESTINATION_KEY_SQL as SQLITE_DESTINATION_KEY } from "../../src/store/sqlite/flow-control.js";
import type { MessageState } from "../../src/domain/message.js";
import { promotedState, type QueueRow, queueSlotCount, slotMoves } from "../../src/domain/queue-slots.js";
import type { Store } from "../../src/store/store.js";
import { adapters, type OpenedStore } from "./adapters.js";
import { aKeyedMessage, aMessage, anAccount, NOW, publish } from "./factories.js";

/**
 * Rules the adapters apply in SQL (or plpgsql) rather than by calling the pure function: the same cases run through
 * the function and through the database, which must agree. The queue's slot moves (src/domain/queue-slots.ts
 * `slotMoves`, applied by both adapters' promote and demote UPDATEs) and the PostgreSQL wake trigger
 * (src/domain/flow-claim.ts `wakeOnLeavingActive`, applied by `ferry_flow_wake` of migration 005).
 */
const ACCOUNT = "acc-rules";

/** Queue contents before a rebalance (in arrival order) and the queue's configuration. */
const slotCases: { rows: [MessageState, number][]; parallelism: number; paused: boolean }[] = [
  { rows: [["QUEUED", 0], ["QUEUED", 0], ["QUEUED", 0]], parallelism: 2, paused: false },
  { rows: [["ACTIVE", 0], ["QUEUED", 1], ["QUEUED", 0]], parallelism: 2, paused: false },
  { rows: [["ACTIVE", 0], ["CREATED", 0], ["RETRY", 1], ["QUEUED", 0]], parallelism: 1, paused: false },
  { rows: [["HELD", 0], ["QUEUED", 0], ["QUEUED", 2]], parallelism: 2, paused: false },
  { rows: [["RETRY", 1], ["CREATED", 0], ["ACTIVE", 0], ["QUEUED", 0]], parallelism: 3, paused: true },
  { rows: [["QUEUED", 3], ["QUEUED", 0], ["QUEUED", 0], ["QUEUED", 0]], parallelism: 10, paused: false },
];

/** URLs as publishers write them, plain and odd: the claim's key must be computed alike in TypeScript and SQL. */
const destinationKeyCases = [
  "http://127.0.0.1:4000/hook",
  "https://a/",
  "http://a/x/y?z=/w",
  "https://example.com",
  "http://a?x=/y",
  "HTTP://Example.COM:80/x",
  "http://user:pw@h:1/p",
  "https://[::1]:8443/é/ü",
  "http:/h/x",
  "http",
];

describe("the claim's destination key", () => {
  it("skips only URLs of one origin: a skippable key is the origin, and every URL with that key has it", () => {
    expect(skippableKeyOf("http://127.0.0.1:4000/hook")).toBe("http://127.0.0.1:4000");
    expect(skippableKeyOf("https://[::1]:8443/x")).toBe("https://[::1]:8443");
    expect(skippableKeyOf("https://example.com")).toBe("https://example.com");
    for (const odd of ["HTTP://Example.COM:80/x", "http://user:pw@h:1/p", "http://a?x=/y", "http:/h/x", "http://h:80/"]) {
      expect(skippableKeyOf(odd), odd).toBeUndefined();
    }
  });
});

for (const adapter of adapters) {
  describe(`rules applied in SQL agree with their pure function: ${adapter.name}`, () => {
    let opened: OpenedStore;
    let store: Store;
    beforeEach(async () => {
      opened = await adapter.open();
      store = opened.store;
      await store.accountInsert({ account: anAccount(ACCOUNT) });
    });
    afterEach(async () => {
      await opened.dispose();
    });

    it("the claim's destination key (DESTINATION_KEY_SQL) is claimKeyOf, URL by URL", async () => {
      const expr = adapter.name === "postgres" ? PG_DESTINATION_KEY : SQLITE_DESTINATION_KEY;
      for (const url of destinationKeyCases) {
        const [row] = await opened.sql<{ k: string }>(`SELECT ${expr} AS k FROM (SELECT $1 AS url) u`, [url]);
        expect(row!.k, url).toBe(claimKeyOf(url));
      }
    });

    it("queue slot moves, case by case", async () => {
      for (const [i, c] of slotCases.entries()) await slotCase(i, c);
    });

    async function slotCase(i: number, c: (typeof slotCases)[number]) {
      const queue = `q${i}`;
      // Created paused, so that the insert promotes nothing; then each row is given the case's state.
      const upsert = { accountId: ACCOUNT, name: queue, now: NOW, maxQueues: 100 };
      await store.queueUpsert({ ...upsert, parallelism: 1, paused: true });
      const inserted = await publish(
        store,
        c.rows.map(() => aMessage(ACCOUNT, { queueName: queue })),
      );
      for (const [j, [state, retried]] of c.rows.entries()) {
        await opened.sql("UPDATE messages SET state = $1, retried = $2 WHERE id = $3", [
          state,
          retried,
          inserted[j]!.messageId,
        ]);
      }
      const before = await opened.sql<{ seq: number; state: MessageState; retried: number }>(
        "SELECT seq, state, retried FROM messages WHERE queue_name = $1 ORDER BY seq",
        [queue],
      );
      const rows: QueueRow[] = before.map((r) => ({ seq: Number(r.seq), state: r.state, retried: r.retried }));
      const { promote, demote } = slotMoves(rows, queueSlotCount({ parallelism: c.parallelism, paused: c.paused }));
      const expected = rows.map((r) =>
        promote.includes(r) ? promotedState(r.retried) : demote.includes(r) ? "QUEUED" : r.state,
      );

      await store.queueUpsert({ ...upsert, parallelism: c.parallelism, paused: c.paused });
      const after = await opened.sql<{ state: string }>(
        "SELECT state FROM messages WHERE queue_name = $1 ORDER BY seq",
        [queue],
      );
      expect(after.map((r) => r.state), `case ${i}`).toEqual(expected);
    }

    it.runIf(adapter.name === "postgres")("the wake trigger, for every combination of wait lists", async () => {
      const cases = [null, NOW + 5000].flatMap((accountWakeAt) =>
        [null, 2].flatMap((parallelism) =>
          [null, NOW + 7000].map((keyWakeAt) => ({ accountWakeAt, parallelism, keyWakeAt })),
        ),
      );
      for (const [i, c] of cases.entries()) {
        const account = `acc-wake-${i}`;
        await store.accountInsert({ account: anAccount(account) });
        await publish(store, [aKeyedMessage(account, NOW, { key: "k", periodSec: 1 })]);
        const [leased] = await store.messageLeaseDue({ now: NOW, limit: 1, owner: "n", leaseUntil: NOW + 60_000 });
        expect(leased?.accountId).toBe(account);
        await opened.sql("UPDATE flow_accounts SET wake_at = $2 WHERE account_id = $1", [account, c.accountWakeAt]);
        await opened.sql("UPDATE flow_keys SET wake_at = $2, parallelism = $3 WHERE account_id = $1", [
          account,
          c.keyWakeAt,
          c.parallelism,
        ]);
        await store.messageFinish({
          message: leased!,
          owner: "n",
          now: NOW,
          outcome: { kind: "delivered" },
          logs: [],
          newMessages: [],
        });
        type Wake = { wake_at: number | string | null };
        const [a] = await opened.sql<Wake>("SELECT wake_at FROM flow_accounts WHERE account_id = $1", [account]);
        const [k] = await opened.sql<Wake>("SELECT wake_at FROM flow_keys WHERE account_id = $1", [account]);
        const expected = wakeOnLeavingActive({
          accountWakeAt: c.accountWakeAt,
          key: { parallelism: c.parallelism, wakeAt: c.keyWakeAt },
        });
        const num = (v: number | string | null) => (v === null ? null : Number(v));
        const got = { accountWakeAt: num(a!.wake_at), keyWakeAt: num(k!.wake_at) };
        expect(got, JSON.stringify(c)).toEqual(expected);
      }
    });
  });
}
