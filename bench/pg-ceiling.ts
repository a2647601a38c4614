/**
 * The least a PostgreSQL node can cost the database per message, with one node and with three: pg1's and pg3's
 * closed loop of 32 publishers (bench/scenarios/postgres.ts) reduced to Ferry's own rows and nothing else. Each
 * writer stands for a node. A run of it is ONE statement in autocommit (one round trip, one transaction, one WAL
 * flush): it inserts the publishes its share of the 32 publishers has outstanding, as Ferry's message INSERT does
 * (its real table, indexes and triggers, from its migrations), and ends the rows of its previous run as delivered,
 * as Ferry's batched finish does. No token read, no flow-control share, no usage counters, no log entries, no BEGIN
 * and no COMMIT message: whatever Ferry does per run beyond this, this does not.
 *
 * Prints, per writer count, PostgreSQL's CPU per message (the postmaster and its backends, /proc), transactions per
 * message and the ratio of three writers to one: the floor of issue 29's "PostgreSQL CPU per message, 3 nodes ÷ 1"
 * for any design where each node commits its own transactions (docs/postgres.md, "Speed").
 *
 *   node --import tsx bench/pg-ceiling.ts [--rounds=3] [--messages=30000] [--publishers=32]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { migrate } from "../src/store/postgres/migrate.js";
import { messageInsertSql, MESSAGE_COLUMNS } from "../src/store/postgres/rows.js";
import { cpuSecondsOf } from "./lib/proc.js";
import { childrenOf, startPostgres } from "./lib/services.js";

const arg = (name: string, fallback: number): number =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const rounds = arg("rounds", 3);
const messages = arg("messages", 30_000);
const publishers = arg("publishers", 32);

const insertSql = messageInsertSql();
const finishSql = `UPDATE messages m SET state = 'DELIVERED', outcome = 'DELIVERED', lease_owner = NULL,
    lease_until = NULL, finished_at = $${MESSAGE_COLUMNS.length + 2}::int8, last_status = 200,
    attempts = m.attempts + 1, finished_seq = nextval('log_seq')
  WHERE m.id = ANY($${MESSAGE_COLUMNS.length + 1}::text[]) AND m.state = 'ACTIVE'`;
/** One statement per run: the new rows and the previous run's outcomes, committed together. */
const runSql = {
  name: "ceiling_run",
  text: `WITH inserted AS (${insertSql}), ended AS (${finishSql}) SELECT 1`,
};

const body = Buffer.alloc(1024, "x");
let nextId = 0;
function columns(n: number, owner: string, now: number): unknown[][] {
  const cols: unknown[][] = MESSAGE_COLUMNS.map(() => []);
  for (let i = 0; i < n; i++) {
    const id = `msg_${process.pid}_${nextId++}`;
    const row: Record<string, unknown> = {
      id,
      account_id: "acct_ceiling",
      kind: "message",
      state: "ACTIVE",
      due_at: now,
      lease_owner: owner,
      lease_until: now + 30_000,
      url: "http://127.0.0.1:9/ceiling",
      url_host: "127.0.0.1:9",
      url_path: "/ceiling",
      body,
      spec: '{"method":"POST","retries":3}',
      created_at: now,
      not_before: now,
      retried: 0,
      derived_log: true,
      first_leased_at: now,
    };
    MESSAGE_COLUMNS.forEach(([c], k) => cols[k]!.push(row[c] ?? null));
  }
  return cols;
}

/**
 * `writers` connections share `publishers` in a closed loop until `messages` rows were inserted. PostgreSQL's CPU is
 * read while the connections are open: a backend's CPU leaves /proc with it.
 */
async function round(url: string, writers: number, cpu: () => number): Promise<{ rowsPerRun: number; cpu: number }> {
  const clients = await Promise.all(
    Array.from({ length: writers }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  let left = messages;
  let runs = 0;
  const before = cpu();
  await Promise.all(
    clients.map(async (client, w) => {
      const share = Math.floor(publishers / writers) + (w < publishers % writers ? 1 : 0);
      const owner = `node_${w}`;
      let previous: string[] = [];
      for (;;) {
        const n = Math.min(share, left);
        left -= n;
        const now = Date.now();
        const cols = columns(n, owner, now);
        await client.query(runSql, [...cols, previous, now]);
        runs++;
        previous = cols[0] as string[];
        if (n === 0) break;
      }
    }),
  );
  const used = cpu() - before;
  await Promise.all(clients.map((c) => c.end()));
  return { rowsPerRun: messages / runs, cpu: used };
}

const workDir = mkdtempSync(join(tmpdir(), "ferry-pg-ceiling-"));
const server = await startPostgres(workDir, (m) => console.log(m));
try {
  const pool = new pg.Pool({ connectionString: server.url, max: 2 });
  await migrate(pool);
  await pool.end();
  const pgCpu = () => [server.pid(), ...childrenOf(server.pid())].reduce((s, p) => s + cpuSecondsOf(p), 0);
  const xacts = async () => {
    const c = new pg.Client({ connectionString: server.url });
    await c.connect();
    await new Promise((r) => setTimeout(r, 1100)); // backends report their counts when idle, at most once a second
    const { rows } = await c.query<{ n: string }>(
      "SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()",
    );
    await c.end();
    return Number(rows[0]!.n);
  };
  await round(server.url, 1, pgCpu); // warm-up: caches, the table's first pages
  const results = new Map<number, { cpu: number[]; xacts: number[]; rowsPerRun: number[] }>();
  for (let r = 0; r < rounds; r++) {
    for (const writers of r % 2 === 0 ? [1, 3] : [3, 1]) {
      const x0 = await xacts();
      const { rowsPerRun, cpu } = await round(server.url, writers, pgCpu);
      const x1 = await xacts();
      const entry = results.get(writers) ?? { cpu: [], xacts: [], rowsPerRun: [] };
      entry.cpu.push((cpu * 1e6) / messages);
      entry.xacts.push((x1 - x0 - 2) / messages); // the two readings' own transactions
      entry.rowsPerRun.push(rowsPerRun);
      results.set(writers, entry);
      console.log(
        `round ${r + 1}, ${writers} writer(s): PostgreSQL ${((cpu * 1e6) / messages).toFixed(1)} µs/msg, ` +
          `${rowsPerRun.toFixed(1)} rows per run`,
      );
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const one = median(results.get(1)!.cpu);
  const three = median(results.get(3)!.cpu);
  for (const [writers, e] of results) {
    console.log(
      `${writers} writer(s): median ${median(e.cpu).toFixed(1)} µs/msg (${e.cpu.map((x) => x.toFixed(1)).join(", ")}), ` +
        `${median(e.xacts).toFixed(3)} transactions/msg, ${median(e.rowsPerRun).toFixed(1)} rows per run`,
    );
  }
  console.log(`3 writers ÷ 1: ${(three / one).toFixed(2)}× PostgreSQL CPU per message`);
} finally {
  await server.stop();
}
