import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createdLogEntry, type LogEntry, logEntry } from "../../src/domain/log.js";
import type { Message } from "../../src/domain/message.js";
import { migrationFiles } from "../../src/store/migration-files.js";
import { loadVectorFunctions } from "../../src/store/sqlite/vector-functions.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { Store } from "../../src/store/store.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { openPostgresTestStores } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";

/**
 * Migration 060 on a database an older Ferry wrote (docs/states.md "The message row"): rows of messages already
 * delivered exist only as log entries, live rows have their CREATED entry written out. After the migration those
 * entries read as before, a live old row still ends as before (its entries written, its row gone), and new messages
 * come after the old ones in the log and in FIFO order.
 */
const account = anAccount("acc-old", { token: "t-old" });
const SQLITE_MIGRATIONS = join(import.meta.dirname, "../../src/store/sqlite/migrations");
const PG_MIGRATIONS = join(import.meta.dirname, "../../src/store/postgres/migrations");

type Sql = (text: string, values?: unknown[]) => Promise<Record<string, unknown>[]>;

const live = { ...aMessage(account.id, { at: NOW, body: Buffer.from("old") }), cancelRequested: false } as Message;
const done = { ...aMessage(account.id, { at: NOW - 10, body: Buffer.from("gone") }), cancelRequested: false } as Message;
/** What the older Ferry had written: `done` delivered (its row deleted), `live` waiting. */
const oldEntries: LogEntry[] = [
  createdLogEntry(done, NOW - 10),
  logEntry(done, "ACTIVE", NOW - 9),
  logEntry(done, "DELIVERED", NOW - 8, { responseStatus: 200 }),
  createdLogEntry(live, NOW),
];

async function writeAsOlderFerry(sql: Sql): Promise<void> {
  await sql(
    `INSERT INTO messages (id, account_id, kind, state, due_at, url, body, spec, created_at, not_before, retried)
     VALUES ($1, $2, 'message', 'CREATED', $3, $4, $5, $6, $3, 0, 0)`,
    [live.id, live.accountId, NOW, live.url, live.body, JSON.stringify(live.spec)],
  );
  for (const e of oldEntries) {
    await sql("INSERT INTO logs (account_id, message_id, state, time, url, details) VALUES ($1, $2, $3, $4, $5, $6)", [
      e.accountId,
      e.messageId,
      e.state,
      e.time,
      e.url,
      JSON.stringify(e.details),
    ]);
  }
}

async function checkMigrated(store: Store, sql: Sql): Promise<void> {
  await store.accountInsert({ account });
  const list = async () =>
    (await store.logList({ accountId: account.id, filter: {}, count: 100, order: "earliestFirst" })).logs.map((e) => ({
      id: e.messageId === live.id ? "live" : e.messageId === done.id ? "done" : "new",
      state: e.state,
      time: e.time,
      details: e.details,
      created: e.created,
    }));
  const created = (m: Message, t: number) => createdLogEntry(m, t).details;
  const before = [
    { id: "done", state: "CREATED", time: NOW - 10, details: created(done, NOW - 10), created: undefined },
    { id: "done", state: "ACTIVE", time: NOW - 9, details: {}, created: created(done, NOW - 10) },
    { id: "done", state: "DELIVERED", time: NOW - 8, details: { responseStatus: 200 }, created: created(done, NOW - 10) },
    { id: "live", state: "CREATED", time: NOW, details: created(live, NOW), created: undefined },
  ];
  expect(await list()).toEqual(before);

  const fresh = aMessage(account.id, { at: NOW + 1, body: Buffer.from("new") });
  await store.messageInsertMany({ items: [{ message: fresh }], now: NOW + 1, dedupWindowMs: 0 });
  const seqs = await sql("SELECT id, seq FROM messages ORDER BY seq");
  expect(seqs.map((r) => r.id)).toEqual([live.id, fresh.id]);

  // The old live row: its lease and its end are written out, and its row goes, as before the migration.
  const lease = async (now: number) =>
    (await store.messageLeaseDue({ now, limit: 1, owner: "A", leaseUntil: now + 60_000 }))[0]!;
  const old = await lease(NOW + 2);
  expect(old.id).toBe(live.id);
  expect(old.derivedLog).toBeUndefined();
  const delivered = logEntry(old, "DELIVERED", NOW + 3, { responseStatus: 202 });
  const finish = (m: Message, now: number, logs: LogEntry[]) =>
    store.messageFinish({ message: m, owner: "A", now, outcome: { kind: "delivered" }, logs, newMessages: [] });
  expect(await finish(old, NOW + 3, [delivered])).toBe(true);
  expect(await sql("SELECT id FROM messages WHERE id = $1", [live.id])).toEqual([]);

  const next = await lease(NOW + 4);
  expect(next.id).toBe(fresh.id);
  expect(await finish(next, NOW + 5, [logEntry(next, "DELIVERED", NOW + 5, { responseStatus: 200 })])).toBe(true);
  const freshCreated = created({ ...fresh, cancelRequested: false }, NOW + 1);
  expect(await list()).toEqual([
    ...before,
    { id: "new", state: "CREATED", time: NOW + 1, details: freshCreated, created: undefined },
    { id: "live", state: "ACTIVE", time: NOW + 2, details: {}, created: created(live, NOW) },
    { id: "live", state: "DELIVERED", time: NOW + 3, details: { responseStatus: 202 }, created: created(live, NOW) },
    { id: "new", state: "ACTIVE", time: NOW + 4, details: {}, created: freshCreated },
    { id: "new", state: "DELIVERED", time: NOW + 5, details: { responseStatus: 200 }, created: freshCreated },
  ]);
  expect((await sql("SELECT state FROM messages WHERE id = $1", [fresh.id])).map((r) => r.state)).toEqual([
    "DELIVERED",
  ]);
}

describe("migration 060 on an older database: sqlite", () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it("keeps the written entries readable, ends old rows as before, and puts new messages after them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ferry-060-"));
    const path = join(dir, "ferry.db");
    const raw = new Database(path);
    loadVectorFunctions(raw);
    raw.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    for (const f of migrationFiles(SQLITE_MIGRATIONS).filter((f) => f.version < 60)) {
      raw.exec(f.sql);
      raw.prepare("INSERT INTO schema_migrations VALUES (?, ?, 0)").run(f.version, f.name);
    }
    const sql: Sql = async (text, values = []) => {
      const args: unknown[] = [];
      const statement = raw.prepare(
        text.replace(/\$(\d+)/g, (_, n: string) => {
          args.push(values[Number(n) - 1]);
          return "?";
        }),
      );
      if (statement.reader) return statement.all(...args) as Record<string, unknown>[];
      statement.run(...args);
      return [];
    };
    await writeAsOlderFerry(sql);
    const store = openSqliteStore({ path, synchronous: "NORMAL" });
    cleanup = async () => {
      await store.close();
      raw.close();
      rmSync(dir, { recursive: true, force: true });
    };
    await checkMigrated(store, sql);
  });
});

describe.skipIf(!postgresAvailable())("migration 060 on an older database: postgres", () => {
  it("keeps the written entries readable, ends old rows as before, and puts new messages after them", async () => {
    const opened = await openPostgresTestStores({ migrate: false });
    try {
      await opened.sql(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
      );
      for (const f of migrationFiles(PG_MIGRATIONS).filter((f) => f.version < 60)) {
        await opened.sql(f.sql);
        await opened.sql("INSERT INTO schema_migrations VALUES ($1, $2, 0)", [f.version, f.name]);
      }
      await writeAsOlderFerry(opened.sql);
      await opened.store.migrate();
      await checkMigrated(opened.store, opened.sql);
    } finally {
      await opened.dispose();
    }
  });
});
