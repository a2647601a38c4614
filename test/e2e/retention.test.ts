import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { USAGE_RETENTION_MS } from "../../src/maintenance/retention.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Retention keeps pace at any rate (docs/operations.md "Table bounds"): far more expired rows than the old
 * 5,000-a-pass limit, seeded straight into the database in one transaction, are all gone within two passes of the
 * retention loop and the DLQ trimmer, while publishes keep being acknowledged. Runs on PostgreSQL under test:pg.
 */
const SEEDED = 201_000;
const FRESH = 10;
const DAY_MS = 86_400_000;
const LOG_RETENTION_MS = 3_600_000;

let server: TestServer;
let accountId: string;

/** Raw SQL on the server's own database, through a second connection (SQLite in WAL allows one alongside). */
interface RawDb {
  exec(sql: string): Promise<void>;
  count(sql: string): Promise<number>;
  close(): Promise<void>;
}

async function rawDb(url: string): Promise<RawDb> {
  if (url.startsWith("sqlite:")) {
    const db = new Database(url.slice("sqlite:".length));
    db.pragma("busy_timeout = 10000");
    return {
      exec: async (sql) => void db.exec(sql),
      count: async (sql) => (db.prepare(sql).get() as { n: number }).n,
      close: async () => void db.close(),
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    exec: async (sql) => void (await client.query(sql)),
    count: async (sql) => Number((await client.query<{ n: string }>(sql)).rows[0]!.n),
    close: () => client.end(),
  };
}

/** `n` rows numbered 1..n: a recursive CTE in SQLite, generate_series in PostgreSQL. */
const series = (sqlite: boolean, n: number) =>
  sqlite
    ? `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n}) SELECT i FROM s`
    : `SELECT i FROM generate_series(1::bigint, ${n}) AS s(i)`;

function seedSql(sqlite: boolean, now: number): string {
  const id = `'${accountId}'`;
  const old = now - LOG_RETENTION_MS - 60_000;
  const oldDlq = now - 200 * DAY_MS; // past every plan's max_dlq_retention_time_milis
  const oldMinute = now - USAGE_RETENTION_MS - 60_000 * 1000; // minus i minutes below: all distinct, all expired
  const insert = (table: string, columns: string, values: string, n: number) =>
    `INSERT INTO ${table} (${columns}) SELECT ${values} FROM (${series(sqlite, n)}) AS rows;`;
  const cat = (a: string, b: string) => `${a} || ${b}`;
  const logCols = "account_id, message_id, state, time, url, details";
  const dlqCols =
    "dlq_id, account_id, message_id, kind, url, spec, created_at, not_before, retried, failed_at, response_headers";
  const dedupCols = "account_id, key, message_id, expires_at";
  const msgCols = "id, account_id, kind, state, due_at, url, spec, created_at, not_before, derived_log, finished_at";
  const ended = (prefix: string, state: string, finishedAt: string, dueAt = old) =>
    `${cat(`'${prefix}'`, "i")}, ${id}, 'message', '${state}', ${dueAt}, 'http://x/', '{}', ${old} - i, 0, ${sqlite ? 1 : "TRUE"}, ${finishedAt}`;
  const dlqValues = [
    `${cat("'1-old'", "i")}, ${id}, ${cat("'msg_dlq_'", "i")}, 'publish', 'http://x/', '{}'`,
    `${oldDlq}, ${oldDlq}, 0, ${oldDlq} + i, '{}'`,
  ].join(", ");
  return [
    "BEGIN;",
    insert("logs", logCols, `${id}, ${cat("'msg_old_'", "i")}, 'DELIVERED', ${old} - i, 'http://x/', '{}'`, SEEDED),
    insert("logs", logCols, `${id}, ${cat("'msg_new_'", "i")}, 'DELIVERED', ${now}, 'http://x/', '{}'`, FRESH),
    insert("dlq", dlqCols, dlqValues, SEEDED),
    insert("dedup", dedupCols, `${id}, ${cat("'k'", "i")}, 'msg_x', ${old} - i`, SEEDED),
    insert("dedup", dedupCols, `${id}, ${cat("'live'", "i")}, 'msg_x', ${now + DAY_MS}`, FRESH),
    insert("usage", "account_id, minute, metric, count, bytes", `${id}, ${oldMinute} - i * 60000, 'r', 1, 0`, SEEDED),
    insert("request_quota", "account_id, day, used", `${cat("'acct-'", "i")}, ${now - 10 * DAY_MS}, 1`, 5_000),
    // Message rows kept for their log (docs/states.md "The message row"): ended long ago, ended lately, and live
    // rows created long ago (a live row is never retention's).
    insert("messages", msgCols, ended("msg_ended_", "DELIVERED", `${old} - i`), SEEDED),
    insert("messages", msgCols, ended("msg_recent_", "FAILED", `${now}`), FRESH),
    insert("messages", msgCols, ended("msg_live_", "CREATED", "NULL", now + DAY_MS), FRESH),
    "COMMIT;",
  ].join("\n");
}

beforeAll(async () => {
  server = await startTestServer({ env: { FERRY_LOG_RETENTION_MS: String(LOG_RETENTION_MS) } });
  accountId = server.ferry.bootstrap.account.id;
});
afterAll(async () => {
  await server.stop();
});

describe("retention keeps pace", () => {
  it(`removes ${SEEDED} expired rows per growing table within two passes, publishes acknowledged`, async () => {
    const url = server.ferry.services.config.databaseUrl;
    const sqlite = url.startsWith("sqlite:");
    const db = await rawDb(url);
    try {
      const now = Date.now();
      await db.exec(seedSql(sqlite, now));
      const expired = {
        logs: `SELECT count(*) AS n FROM logs WHERE message_id LIKE 'msg_old_%'`,
        dlq: `SELECT count(*) AS n FROM dlq WHERE dlq_id LIKE '1-old%'`,
        dedup: `SELECT count(*) AS n FROM dedup WHERE key LIKE 'k%'`,
        usage: `SELECT count(*) AS n FROM usage WHERE minute < ${now - USAGE_RETENTION_MS}`,
        request_quota: `SELECT count(*) AS n FROM request_quota WHERE account_id LIKE 'acct-%'`,
        messages: `SELECT count(*) AS n FROM messages WHERE id LIKE 'msg_ended_%'`,
      };
      expect(await db.count(expired.logs)).toBe(SEEDED);
      expect(await db.count(expired.dlq)).toBe(SEEDED);

      // Publishes run the whole time the passes do; every one must be acknowledged.
      let passesDone = false;
      const statuses: number[] = [];
      let slowestMs = 0;
      const publisher = (async () => {
        for (let i = 0; i < 20_000 && !passesDone; i++) {
          const started = performance.now();
          const res = await server.call("POST", "/v2/publish/http://127.0.0.1:9/r", {
            headers: { "Svc-Delay": "1h" },
            body: `p${i}`,
          });
          slowestMs = Math.max(slowestMs, performance.now() - started);
          statuses.push(res.status);
        }
      })();

      const { retention, dlqTrimmer } = server.ferry.loops;
      for (let pass = 0; pass < 2; pass++) {
        await retention!.runOnce();
        await dlqTrimmer!.runOnce();
      }
      passesDone = true;
      await publisher;

      for (const [table, sql] of Object.entries(expired)) expect(await db.count(sql), table).toBe(0);
      // Rows still within their retention stay.
      expect(await db.count(`SELECT count(*) AS n FROM logs WHERE message_id LIKE 'msg_new_%'`)).toBe(FRESH);
      expect(await db.count(`SELECT count(*) AS n FROM dedup WHERE key LIKE 'live%'`)).toBe(FRESH);
      expect(await db.count(`SELECT count(*) AS n FROM messages WHERE id LIKE 'msg_recent_%'`)).toBe(FRESH);
      expect(await db.count(`SELECT count(*) AS n FROM messages WHERE id LIKE 'msg_live_%'`)).toBe(FRESH);
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      // A figure for docs/operations.md, not an assertion (timings belong in bench/).
      console.info(`retention: ${statuses.length} publishes during the passes, slowest ${slowestMs.toFixed(0)} ms`);
    } finally {
      await db.close();
    }
  }, 180_000);
});
