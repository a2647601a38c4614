import pg from "pg";
import { migrate } from "../../src/store/postgres/migrate.js";
import { MESSAGE_COLUMNS, messageInsertSql } from "../../src/store/postgres/rows.js";
import { CpuMeter } from "../lib/proc.js";
import { type BenchContext, pick, rounds, type Scenario } from "../lib/scenario.js";
import { childrenOf, startPostgres } from "../lib/services.js";
import { formatNumber } from "../lib/stats.js";

/**
 * pgleast: the least a node can cost PostgreSQL per message, with one node and with three. pg1's and pg3's closed
 * loop of 32 publishers reduced to Ferry's own rows and nothing else: each writer (one connection) stands for a node
 * and holds in each run the publishes its share of the 32 publishers has outstanding (32 for one writer, 11, 11 and 10
 * for three). A run is ONE statement in autocommit (one round trip, one transaction, one WAL flush): it inserts the
 * rows with Ferry's message INSERT (its real table, indexes and triggers, from its migrations) and ends the previous
 * run's rows as delivered, as Ferry's batched finish does. No token check, no flow-control share, no usage counters,
 * no BEGIN and no COMMIT of their own: whatever Ferry does per run beyond this, this does not.
 *
 * So "3 writers ÷ 1" is the floor of issue 29's "PostgreSQL CPU per message, 3 nodes ÷ 1" for any design in which
 * each node commits its own transactions, and pg3 ÷ pgleast at three writers is what Ferry's runs cost beyond the
 * rows (docs/postgres.md, "Speed").
 */
const PUBLISHERS = 32;

const finishSql = `UPDATE messages m SET state = 'DELIVERED', outcome = 'DELIVERED', lease_owner = NULL,
    lease_until = NULL, finished_at = $${MESSAGE_COLUMNS.length + 2}::int8, last_status = 200,
    attempts = m.attempts + 1, finished_seq = nextval('log_seq')
  WHERE m.id = ANY($${MESSAGE_COLUMNS.length + 1}::text[]) AND m.state = 'ACTIVE'`;
/** One statement per run: the new rows and the previous run's outcomes, committed together. */
const runSql = {
  name: "least_run",
  text: `WITH inserted AS (${messageInsertSql()}), ended AS (${finishSql}) SELECT 1`,
};

const body = Buffer.alloc(1024, "x");
let nextId = 0;

/** One array per MESSAGE_COLUMNS entry for `n` rows leased to `owner`, as a fast-path publish inserts them. */
function columns(n: number, owner: string, now: number): unknown[][] {
  const row = (id: string): Record<string, unknown> => ({
    id,
    account_id: "acct_least",
    kind: "message",
    state: "ACTIVE",
    due_at: now,
    lease_owner: owner,
    lease_until: now + 30_000,
    url: "http://127.0.0.1:9/least",
    url_host: "127.0.0.1:9",
    url_path: "/least",
    body,
    spec: '{"method":"POST","retries":3}',
    created_at: now,
    not_before: now,
    retried: 0,
    derived_log: true,
    first_leased_at: now,
  });
  const cols: unknown[][] = MESSAGE_COLUMNS.map(() => []);
  for (let i = 0; i < n; i++) {
    const r = row(`msg_least_${nextId++}`);
    MESSAGE_COLUMNS.forEach(([c], k) => cols[k]!.push(r[c] ?? null));
  }
  return cols;
}

/**
 * `writers` connections share the publishers in a closed loop until `total` rows were inserted; returns
 * PostgreSQL's CPU seconds, measured as pg1's and pg3's are (CpuMeter over the postmaster and its backends, read while
 * the connections are open: a backend's CPU leaves /proc with it), and the rows per run.
 */
async function round(url: string, writers: number, total: number, dbPids: () => number[]) {
  const clients = await Promise.all(
    Array.from({ length: writers }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  let left = total;
  let runs = 0;
  const meter = new CpuMeter(dbPids);
  await Promise.all(
    clients.map(async (client, w) => {
      const share = Math.floor(PUBLISHERS / writers) + (w < PUBLISHERS % writers ? 1 : 0);
      let previous: string[] = [];
      // Bounded: every run takes at least one row of `total`, and the last one ends the previous run's rows.
      while (previous.length > 0 || left > 0) {
        const n = Math.min(share, left);
        left -= n;
        const now = Date.now();
        const cols = columns(n, `node_${w}`, now);
        await client.query(runSql, [...cols, previous, now]);
        runs++;
        previous = cols[0] as string[];
      }
    }),
  );
  const cpu = meter.read().servers;
  await Promise.all(clients.map((c) => c.end()));
  return { cpu, rowsPerRun: total / runs };
}

export const pgLeastScenario: Scenario = {
  id: "pgleast",
  title: "PostgreSQL, the least per-node design (Ferry's rows, one statement per run)",
  async run(ctx: BenchContext) {
    const server = await startPostgres(ctx.workDir, ctx.log);
    ctx.defer(() => server.stop());
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    try {
      await migrate(pool);
    } finally {
      await pool.end();
    }
    const dbPids = () => [server.pid(), ...childrenOf(server.pid())];
    const total = pick(ctx, 20_000, 2_000);
    await round(server.url, 1, pick(ctx, 5_000, 500), dbPids); // warm-up: caches, the table's first pages
    // Per round, and in all (as pg1's and pg3's figure: every measured round's CPU over every round's messages).
    const perMessage = new Map<number, number[]>([
      [1, []],
      [3, []],
    ]);
    const perRun = new Map<number, number>();
    // Rounds alternate (1, 3, 3, 1, 1, 3 …), so the table's growth and the checkpoints fall on both alike.
    for (let r = 0; r < rounds(ctx); r++) {
      for (const writers of r % 2 === 0 ? [1, 3] : [3, 1]) {
        const { cpu, rowsPerRun } = await round(server.url, writers, total, dbPids);
        perMessage.get(writers)!.push((cpu * 1e6) / total);
        perRun.set(writers, rowsPerRun);
      }
    }
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const scenario = "PostgreSQL, least per node";
    for (const writers of [1, 3]) {
      const values = perMessage.get(writers)!;
      ctx.record({
        key: writers === 1 ? "pgleast.one" : "pgleast.three",
        scenario,
        metric: `PostgreSQL CPU per message, ${writers} writer${writers > 1 ? "s" : ""}`,
        value: mean(values),
        unit: "µs",
        detail: `${values.length * total} messages over every measured round (by round: ${values.map((v) => formatNumber(v)).join(", ")}), ${formatNumber(perRun.get(writers)!)} per run; one statement per run: Ferry's message INSERT and batched finish, nothing else`,
      });
    }
  },
};
