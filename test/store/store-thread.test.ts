import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { NewMessage } from "../../src/domain/message.js";
import { AppError } from "../../src/errors.js";
import { writesAccounts } from "../../src/store/account-writes.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { Store } from "../../src/store/store.js";
import { openStoreThread, storeThreadStats } from "../../src/store/thread/proxy.js";
import { errorFromWire, errorToWire } from "../../src/threads/wire.js";
import { freshDatabase, postgresAvailable } from "../helpers/postgres.js";
import { aMessage, anAccount, NOW } from "./factories.js";

const log = pino({ level: "silent" });
const account = anAccount("acc-thread", { token: "tok-thread" });

const message = (body: Buffer, dueAt = NOW): NewMessage =>
  aMessage(account.id, { body, dueAt, spec: { method: "POST", headers: {}, retries: 3 } });

/** Waits (bounded) until `n` store threads LISTEN on the database: their LISTEN connection's last statement. */
async function listeningNodes(url: string, n: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let i = 0; i < 400; i++) {
      const { rows } = await client.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN ferry_due'",
      );
      if (Number(rows[0]!.n) >= n) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`${n} LISTEN connections not seen within 10 s`);
  } finally {
    await client.end();
  }
}

const toClose: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of toClose.splice(0).reverse()) await close();
});

async function threadStore(databaseUrl: string, env: Record<string, string> = {}): Promise<Store> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, FERRY_LOG_LEVEL: "silent", ...env });
  const store = await openStoreThread(config, log);
  await store.migrate();
  return store;
}

function sqliteFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "ferry-thread-"));
  toClose.push(async () => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "ferry.db");
}

describe("store thread proxy (SQLite)", () => {
  it("runs calls in the store thread; byte arrays come back as Buffers with the same bytes", async () => {
    const store = await threadStore(`sqlite:${sqliteFile()}`);
    toClose.push(() => store.close());
    await store.accountInsert({ account });
    // A body that is a view into a larger buffer (as socket reads and pooled Buffers are).
    const big = Buffer.alloc(64 * 1024, 7);
    big.write("payload", 100);
    const body = big.subarray(100, 107);
    const [inserted] = await store.messageInsertMany({ items: [{ message: message(body) }], now: NOW, dedupWindowMs: 0 });
    expect(Buffer.isBuffer(inserted!.message!.body)).toBe(true);
    expect(inserted!.message!.body!.toString()).toBe("payload");
    expect(body.toString()).toBe("payload"); // the caller's buffer was copied, not given away
    const got = await store.messageGet({ accountId: account.id, id: inserted!.messageId });
    expect(Buffer.isBuffer(got!.body)).toBe(true);
    expect(got!.body!.equals(Buffer.from("payload"))).toBe(true);
    expect(await store.accountGetByToken({ token: account.token })).toMatchObject({ id: account.id });
  });

  it("sends the calls of one event-loop turn to the store thread in one message", async () => {
    const store = await threadStore(`sqlite:${sqliteFile()}`);
    toClose.push(() => store.close());
    await store.accountInsert({ account });
    const before = { ...storeThreadStats(store)! };
    const bodies = Array.from({ length: 50 }, (_, i) => Buffer.from(`m${i}`));
    const results = await Promise.all(
      bodies.map((b) => store.messageInsertMany({ items: [{ message: message(b) }], now: NOW, dedupWindowMs: 0 })),
    );
    const after = storeThreadStats(store)!;
    expect(after.batches - before.batches).toBe(1);
    expect(after.calls - before.calls).toBe(50);
    expect(results.map((r) => r[0]!.message!.body!.toString())).toEqual(bodies.map((b) => b.toString()));
  });

  it("rebuilds errors with their name and code; a failing call does not fail the others of its batch", async () => {
    const store = await threadStore(`sqlite:${sqliteFile()}`);
    toClose.push(() => store.close());
    await store.accountInsert({ account });
    const [dup, ok] = await Promise.allSettled([
      store.accountInsert({ account }),
      store.accountInsert({ account: { ...account, id: "acc-other", token: "tok-other" } }),
    ]);
    expect(dup.status).toBe("rejected");
    const error = (dup as PromiseRejectedResult).reason as Error & { code?: string };
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("SqliteError");
    expect(error.code).toMatch(/^SQLITE_CONSTRAINT/);
    expect(ok.status).toBe("fulfilled");
    expect(await store.accountGet({ id: "acc-other" })).toMatchObject({ token: "tok-other" });
  });

  it("close() writes what was queued, durably, before the thread ends", async () => {
    const file = sqliteFile();
    const store = await threadStore(`sqlite:${file}`);
    await store.accountInsert({ account });
    const messages = Array.from({ length: 200 }, (_, i) => message(Buffer.from(`c${i}`)));
    // Not awaited: the writes are still on their way to the store thread when close() is asked for.
    const writes = messages.map((m) => store.messageInsertMany({ items: [{ message: m }], now: NOW, dedupWindowMs: 0 }));
    await store.close();
    await Promise.all(writes);
    await expect(store.accountGet({ id: account.id })).rejects.toThrow(/closed/);
    const reopened = openSqliteStore({ path: file, synchronous: "FULL" });
    toClose.push(() => reopened.close());
    for (const m of messages) {
      expect((await reopened.messageGet({ accountId: account.id, id: m.id }))?.body?.toString()).toBe(m.body!.toString());
    }
  });
});

describe("account writes (they empty the account cache)", () => {
  it("takes every account and customer method but the reads for a write", () => {
    for (const write of ["accountInsert", "accountInsertDefault", "accountUpdate", "accountRotateKeys", "customerInsert", "customerUpdate"]) {
      expect(writesAccounts(write), write).toBe(true);
    }
    for (const read of ["accountGet", "accountGetByToken", "accountFirst", "accountListByCustomer", "accountDlqCount", "accountActivity", "customerGet", "customerFirst", "messageInsertMany"]) {
      expect(writesAccounts(read), read).toBe(false);
    }
  });
});

describe("errors across the thread", () => {
  it("an AppError keeps its class, code, status and headers; other errors their name, code and unavailable flag", () => {
    const app = errorFromWire(errorToWire(new AppError("rate_limited", "slow down", { "retry-after": "1" })));
    expect(app).toBeInstanceOf(AppError);
    expect(app).toMatchObject({ code: "rate_limited", status: 429, message: "slow down", headers: { "retry-after": "1" } });
    const pg = Object.assign(new Error("disk full"), { code: "53100", unavailable: true, client: { secret: "x" } });
    pg.name = "DatabaseError";
    const back = errorFromWire(errorToWire(pg)) as Error & Record<string, unknown>;
    expect(back).toMatchObject({ name: "DatabaseError", message: "disk full", code: "53100", unavailable: true });
    expect(back.client).toBeUndefined();
  });
});

describe.skipIf(!postgresAvailable())("store thread proxy (PostgreSQL)", () => {
  it("a database that cannot be reached answers `unavailable` through the thread", async () => {
    const store = await openStoreThread(
      loadConfig({ DATABASE_URL: "postgres://nobody@127.0.0.1:9/none", FERRY_LOG_LEVEL: "silent" }),
      log,
    );
    toClose.push(() => store.close());
    await expect(store.accountGet({ id: "x" })).rejects.toMatchObject({ unavailable: true });
  });

  it("delivers subscribeDue events from the store thread when another node makes a message due", async () => {
    const db = await freshDatabase();
    toClose.push(() => db.drop());
    const a = await threadStore(db.url);
    toClose.push(() => a.close());
    const b = await threadStore(db.url);
    toClose.push(() => b.close());
    await a.accountInsert({ account });
    let events = 0;
    let onEvent: () => void = () => {};
    const unsubscribe = a.subscribeDue!(() => {
      events++;
      onEvent();
    });
    toClose.push(async () => unsubscribe());
    await listeningNodes(db.url, 2);
    const seen = events;
    const arrived = new Promise<void>((resolve) => {
      onEvent = () => {
        if (events > seen) resolve();
      };
    });
    const now = Date.now();
    await b.messageInsertMany({ items: [{ message: message(Buffer.from("due"), now) }], now, dedupWindowMs: 0 });
    await arrived;
    expect(events).toBeGreaterThan(seen);
  });
});
