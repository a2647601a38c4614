import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/domain/message.js";
import { MESSAGE_INSERT_SQL, openSqlite, type SqliteContext } from "../../src/store/sqlite/context.js";
import { DELIVER_KEPT_SQL } from "../../src/store/sqlite/messages.js";
import { ENDED_ROW, LIVE_ROW, liveRowOf } from "../../src/store/sqlite/row-states.js";
import { MESSAGE_COLUMNS, type MessageRow, messageFromRow, messageValues } from "../../src/store/sqlite/rows.js";
import { anAccount, aMessage, NOW } from "./factories.js";

/**
 * The SQLite write path of a plain message (docs/threading.md "Where the time goes"): the statements a publish and a
 * delivery run evaluate no partial-index condition through an ephemeral table (migration 065), the queries of live
 * and ended rows still use their partial indexes, and the positional INSERT binds every column where it belongs.
 */
describe("SQLite hot path", () => {
  let dir: string;
  let ctx: SqliteContext;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "ferry-hot-"));
    ctx = openSqlite(join(dir, "f.db"), "NORMAL");
  });
  afterEach(async () => {
    await ctx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const opcodes = (sql: string, params: unknown[]) =>
    (ctx.db.prepare(`EXPLAIN ${sql}`).all(...params) as { opcode: string }[]).map((r) => r.opcode);

  it("a publish's INSERT and a delivery's UPDATE open no ephemeral table", () => {
    const insert = `INSERT INTO messages (${MESSAGE_COLUMNS.join(", ")}) VALUES (${MESSAGE_COLUMNS.map(() => "?").join(", ")})`;
    const deliver = `UPDATE messages SET state = 'DELIVERED', outcome = 'DELIVERED', lease_owner = NULL,
      lease_until = NULL, finished_at = ?, finished_seq = ?, last_status = ?, attempts = attempts + 1
      WHERE id = ? AND lease_owner = ? AND state = 'ACTIVE'`;
    expect(opcodes(insert, MESSAGE_COLUMNS.map(() => null))).not.toContain("OpenEphemeral");
    expect(opcodes(deliver, [1, 1, 200, "m", "o"])).not.toContain("OpenEphemeral");
  });

  it("a publish's INSERT and a delivery's UPDATE cannot abort, so SQLite keeps no statement journal for them", () => {
    // A statement that fires a trigger (the ACTIVE counts of flow_accounts) writes two tables, and SQLite keeps a
    // statement journal for it (a copy of every page it writes) when any of its checks may abort the statement
    // alone (OE_Abort, 2, in a Halt's p2). Migration 068's triggers with OR FAIL on both statements code none.
    const aborting = (sql: string, params: unknown[]) =>
      (ctx.db.prepare(`EXPLAIN ${sql}`).all(...params) as { opcode: string; p1: number; p2: number; p4: unknown }[])
        .filter((r) => r.opcode.startsWith("Halt") && r.p1 !== 0 && r.p2 === 2)
        .map((r) => `${r.opcode} ${String(r.p4)}`);
    expect(aborting(MESSAGE_INSERT_SQL, MESSAGE_COLUMNS.map(() => null))).toEqual([]);
    expect(aborting(DELIVER_KEPT_SQL, [1, 1, 200, "m", "o"])).toEqual([]);
  });

  it("migration 068's triggers count ACTIVE rows as before, a missing flow_accounts row included", async () => {
    const active = (accountId: string) =>
      (ctx.db.prepare("SELECT active FROM flow_accounts WHERE account_id = ?").pluck().get(accountId) as number | undefined) ??
      null;
    const account = anAccount("acc-count");
    const leased = (id: string): Message => ({
      ...aMessage(account.id, { at: NOW, body: Buffer.from("x") }),
      id,
      state: "ACTIVE",
      cancelRequested: false,
    });
    await ctx.write(() => {
      ctx.insertMessage(leased("m1"), "owner", NOW + 60_000);
      ctx.insertMessage(leased("m2"), "owner", NOW + 60_000);
    });
    expect(active(account.id)).toBe(2);
    const deliver = ctx.db.prepare("UPDATE OR FAIL messages SET state = 'DELIVERED' WHERE id = ?");
    await ctx.write(() => deliver.run("m1"));
    expect(active(account.id)).toBe(1);
    // Leaving ACTIVE with no row makes one at 0, entering with none makes one at 1 (as the UPSERT they replace).
    await ctx.write(() => ctx.db.prepare("DELETE FROM flow_accounts WHERE account_id = ?").run(account.id));
    await ctx.write(() => deliver.run("m2"));
    expect(active(account.id)).toBe(0);
    await ctx.write(() => ctx.db.prepare("DELETE FROM flow_accounts WHERE account_id = ?").run(account.id));
    await ctx.write(() => ctx.db.prepare("UPDATE messages SET state = 'ACTIVE' WHERE id = 'm1'").run());
    expect(active(account.id)).toBe(1);
  });

  it("queries of live and ended rows use the partial indexes", () => {
    const plan = (sql: string) =>
      (ctx.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(" | ");
    expect(plan(`SELECT * FROM messages WHERE account_id = 'a' AND ${LIVE_ROW} AND state != 'HELD' ORDER BY seq`)).toContain(
      "messages_live",
    );
    expect(
      plan(`SELECT seq FROM messages WHERE account_id = 'a' AND queue_name = 'q' AND kind = 'message'
        AND queue_name IS NOT NULL AND ${LIVE_ROW} ORDER BY seq LIMIT 3`),
    ).toContain("messages_queue");
    expect(
      plan(`SELECT COUNT(*) FROM messages m WHERE m.account_id = 'a' AND m.queue_name = 'q' AND m.kind = 'message'
        AND m.queue_name IS NOT NULL AND ${liveRowOf("m")}`),
    ).toContain("messages_queue");
    expect(plan(`SELECT COUNT(*) FROM messages WHERE parent_id = 'p' AND parent_id IS NOT NULL AND ${LIVE_ROW}`)).toContain(
      "messages_parent",
    );
    expect(plan(`SELECT seq FROM messages WHERE ${ENDED_ROW} AND finished_at < 5 LIMIT 10`)).toContain("messages_ended");
  });

  it("the positional INSERT stores every column where the row is read from", async () => {
    expect(messageValues({ ...aMessage("a"), cancelRequested: false } as Message, null, null, 1, null)).toHaveLength(
      MESSAGE_COLUMNS.length,
    );
    const account = anAccount("acc-hot");
    const built = aMessage(account.id, { at: NOW, body: Buffer.from("hot") });
    const m: Message = {
      ...built,
      kind: "callback",
      parentId: "msg_parent",
      state: "ACTIVE",
      cancelRequested: false,
      topicName: "topic",
      endpointName: "endpoint",
      queueName: "queue",
      scheduleId: "scd_1",
      callerIp: "10.0.0.1",
      dedupId: "dedup",
      derivedLog: true,
      firstLeasedAt: NOW + 1,
      spec: { ...built.spec, labels: ["a", "b"], flowControl: { key: "k", parallelism: 2, periodSec: 1 } },
    };
    await ctx.write(() => ctx.insertMessage(m, "owner-1", NOW + 60_000));
    const row = ctx.db.prepare("SELECT * FROM messages WHERE id = ?").get(m.id) as MessageRow;
    expect(row.lease_owner).toBe("owner-1");
    expect(row.lease_until).toBe(NOW + 60_000);
    expect(row.flow_key).toBe("k");
    expect(row.first_leased_at).toBe(NOW + 1);
    expect((row as MessageRow & { active_seq: number }).active_seq).toBe(row.seq + 1);
    const read = messageFromRow(row);
    for (const key of Object.keys(m) as (keyof Message)[]) {
      if (key === "leaseOwner" || key === "leaseUntil") continue;
      expect(read[key], key).toEqual(m[key]);
    }
  });
});
