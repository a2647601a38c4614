import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { findProfile, profileMarkdown, summarizeProfile } from "../lib/cpuprofile.js";
import { deliveryRun, type DeliveryRunResult } from "../lib/delivery-run.js";
import { type FerryProcess, publishRequest, startFerry } from "../lib/ferry.js";
import { makeBody, openLoop } from "../lib/generator.js";
import {
  addRoles,
  type PgWork,
  PgRoleCpuMeter,
  PgWorkMeter,
  rolesPerMessage,
  statementTable,
  workBetween,
  workPerMessage,
} from "../lib/pg-stats.js";
import { CpuMeter } from "../lib/proc.js";
import { BenchReceiver, SENT_HEADER } from "../lib/receiver.js";
import { type BenchContext, pick, rounds, type Scenario } from "../lib/scenario.js";
import { childrenOf, type PostgresServer, startPostgres } from "../lib/services.js";
import { formatNumber, medianOf, percentile } from "../lib/stats.js";
import { endToEndLoad } from "./forwarder.js";

/**
 * Publish→arrival is measured open loop at a fixed, moderate rate: well below what one node delivers here, so the
 * figure is latency and not a backlog (P3's 1,000 msg/s on SQLite is a third of P1). `BENCH_PG_RATE` changes it.
 */
const LATENCY_RATE = Number(process.env.BENCH_PG_RATE ?? "250");

/** Everything one PostgreSQL scenario runs on: a fresh cluster, its Ferry nodes, one receiver. */
interface PgSetup {
  pg: PostgresServer;
  nodes: FerryProcess[];
  receiver: BenchReceiver;
  /** The postmaster and its backends (re-read at the end of a measurement: backends come and go). */
  dbPids: () => number[];
  postmaster: number;
}

/**
 * A fresh PostgreSQL 15 cluster (durable defaults) and `count` Ferry nodes on its one database, each its own
 * `npm start` process on its own port. Started one after another: the first migrates and creates the default
 * account, the others find them. Everything is stopped by the scenario's deferred cleanups, nodes before the cluster.
 */
async function setUp(ctx: BenchContext, name: string, count: number): Promise<PgSetup> {
  const pg = await startPostgres(ctx.workDir, ctx.log);
  ctx.defer(() => pg.stop());
  const receiver = await BenchReceiver.start();
  ctx.defer(() => receiver.close());
  // Several nodes: the receiver counts message ids, so a message delivered by two nodes shows as a duplicate.
  receiver.trackMessageIds = true;
  const nodes: FerryProcess[] = [];
  for (let i = 0; i < count; i++) {
    const env = { DATABASE_URL: pg.url };
    const node = await startFerry({ workDir: ctx.workDir, name: `${name}-node${i + 1}`, env });
    ctx.defer(() => node.stop());
    nodes.push(node);
  }
  const postmaster = pg.pid();
  return { pg, nodes, receiver, dbPids: () => [postmaster, ...childrenOf(postmaster)], postmaster };
}

interface Throughput {
  r: DeliveryRunResult;
  /** CPU seconds PostgreSQL (postmaster and backends) used during the run. */
  dbCpu: number;
}

/** What every measured round together cost the database (not only the median one: the counters need a pause). */
interface RoundsWork {
  work: PgWork;
  delivered: number;
  /** CPU seconds of the Ferry nodes and of PostgreSQL over all measured rounds. */
  ferryCpu: number;
  dbCpu: number;
  /** PostgreSQL's CPU seconds by process role (backends, checkpointer, autovacuum, …). */
  dbRoles: Map<string, number>;
}

/** P1's load, publishers spread round-robin over the nodes; the median of the rounds by delivered msg/s. */
async function throughput(ctx: BenchContext, s: PgSetup, n: number) {
  const load = endToEndLoad(ctx);
  const destination = s.receiver.url("/pg");
  const make = () => publishRequest(destination, load.body);
  const origin = s.nodes.map((node) => node.origin);
  const serverPids = () => [...s.nodes.map((node) => node.child.pid), ...s.dbPids()];
  let delivered = 0;
  let dbCpu = 0;
  let allCpu = 0;
  const dbRoles = new Map<string, number>();
  const once = async (total: number): Promise<Throughput> => {
    const db = new CpuMeter(s.dbPids);
    const all = new CpuMeter(serverPids);
    const roles = new PgRoleCpuMeter(s.postmaster, s.dbPids);
    const r = await deliveryRun({ origin, receiver: s.receiver, serverPids, ...load, total, make });
    const t = { r, dbCpu: db.read().servers };
    addRoles(dbRoles, roles.read());
    delivered += r.delivered;
    dbCpu += t.dbCpu;
    allCpu += all.read().servers;
    return t;
  };
  await once(load.warmUp); // warm-up: JIT, keep-alive connections, prepared statements on every pooled connection
  const meter = await PgWorkMeter.open(s.pg.url);
  ctx.defer(() => meter.close());
  const before = await meter.read();
  delivered = dbCpu = allCpu = 0;
  dbRoles.clear();
  const median = await medianOf(n, () => once(load.total), (t) => t.r.deliveredPerSec);
  const work = workBetween(before, await meter.read());
  return { ...median, rounds: { work, delivered, ferryCpu: allCpu - dbCpu, dbCpu, dbRoles } satisfies RoundsWork };
}

/** µs per message of Ferry's processes and of PostgreSQL's, over every measured round. */
const cpuPerMessage = (w: RoundsWork) => ({
  ferry: (w.ferryCpu * 1e6) / Math.max(1, w.delivered),
  db: (w.dbCpu * 1e6) / Math.max(1, w.delivered),
});

/**
 * The database work per message (the 3 ÷ 1 figure is about it): PostgreSQL's CPU, its transactions and
 * the statements Ferry sent, over every measured round; the statement table goes to the results file.
 */
function recordWork(ctx: BenchContext, key: string, scenario: string, w: RoundsWork): void {
  const cpu = cpuPerMessage(w);
  ctx.record({
    key: `${key}.dbCpu`,
    scenario,
    metric: "PostgreSQL CPU per message",
    value: cpu.db,
    unit: "µs",
    detail: `${w.delivered} messages over every measured round; Ferry ${formatNumber(cpu.ferry)} µs/msg; PostgreSQL by process: ${rolesPerMessage(w.dbRoles, w.delivered)}; ${workPerMessage(w.work, w.delivered)}`,
  });
  ctx.record({
    key: `${key}.xacts`,
    scenario,
    metric: "PostgreSQL transactions per message",
    value: w.work.commits / Math.max(1, w.delivered),
    unit: "xact",
    detail: `statements per message ${(w.work.statements / Math.max(1, w.delivered)).toFixed(2)} (pg_stat_statements, BEGIN and COMMIT included)`,
  });
  ctx.section(`${scenario}: statements per message`, statementTable(w.work, w.delivered));
}

function throughputDetail(t: Throughput, s: PgSetup, spread: string): string {
  const unsigned = t.r.delivered - t.r.signed;
  const dbPerMsg = Math.round((t.dbCpu * 1e6) / Math.max(1, t.r.delivered));
  const nodes = `${s.nodes.length} Ferry node${s.nodes.length > 1 ? "s" : ""}`;
  return [
    `${t.r.detail} (CPU: ${nodes} + PostgreSQL, of which PostgreSQL ${dbPerMsg} µs/msg)`,
    unsigned > 0 ? `${unsigned} arrived UNSIGNED` : "",
    spread,
    s.pg.settings,
  ]
    .filter((p) => p !== "")
    .join("; ");
}

/**
 * Publish→arrival at LATENCY_RATE, open loop (as P3), sends spread round-robin over the nodes; the send time
 * travels as a forwarded header. Records `<key>.p50` and `<key>.p99`.
 */
async function latency(ctx: BenchContext, s: PgSetup, key: string, scenario: string): Promise<void> {
  const body = makeBody(1024);
  const destination = s.receiver.url("/pg-latency");
  const phase = (seconds: number) =>
    openLoop({
      origin: s.nodes.map((node) => node.origin),
      ratePerSec: LATENCY_RATE,
      durationMs: seconds * 1000,
      connections: 64,
      maxInFlight: 5_000,
      make: (_i, sentAt) =>
        publishRequest(destination, body, { [`svc-forward-${SENT_HEADER}`]: sentAt.toFixed(3) }),
    });
  await phase(1); // warm-up
  await s.receiver.waitFor(LATENCY_RATE, 10_000);
  await s.receiver.reset();

  const seconds = pick(ctx, 20, 3);
  const cpu = new CpuMeter(s.nodes.map((node) => node.child.pid));
  const db = new CpuMeter(s.dbPids);
  const a = await phase(seconds);
  await s.receiver.waitFor(a.acked, 30_000);
  const ferryCores = cpu.read().servers / seconds;
  const dbCores = db.read().servers / seconds;
  const samples = s.receiver.latencies;
  const ack = (p: number) => formatNumber(percentile(a.ackLatencies, p));
  const over = `over ${s.nodes.length} node${s.nodes.length > 1 ? "s" : ""}`;
  const lost = a.acked - (s.receiver.count - s.receiver.duplicates);
  ctx.record({
    key: `${key}.p50`,
    scenario,
    metric: "publish → arrival p50",
    value: percentile(samples, 50),
    unit: "ms",
    detail: [
      `${samples.length} msgs at ${LATENCY_RATE}/s for ${seconds} s ${over}`,
      a.skipped > 0 ? `${a.skipped} sends SKIPPED (backlog)` : "",
      a.errors > 0 ? `${a.errors} publish errors (${a.firstError})` : "",
      lost > 0 ? `${lost} not arrived` : "",
      `${s.receiver.duplicates} duplicate deliveries`,
      `publish ack p50 ${ack(50)} ms, p99 ${ack(99)} ms`,
      `Ferry used ${ferryCores.toFixed(2)} of a core, PostgreSQL ${dbCores.toFixed(2)}`,
    ]
      .filter((p) => p !== "")
      .join("; "),
  });
  ctx.record({
    key: `${key}.p99`,
    scenario,
    metric: "publish → arrival p99",
    value: percentile(samples, 99),
    unit: "ms",
    detail: `max ${formatNumber(percentile(samples, 100))} ms`,
  });
}

/** A second single node under `node --cpu-prof`, same load, one round: where a PostgreSQL node spends its time. */
async function profileOneNode(ctx: BenchContext, s: PgSetup): Promise<void> {
  const profDir = join(ctx.workDir, "pg1-profile");
  mkdirSync(profDir, { recursive: true });
  const profiled = await startFerry({
    workDir: ctx.workDir,
    name: "pg1-prof",
    env: { DATABASE_URL: s.pg.url },
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profDir}`],
  });
  ctx.defer(() => profiled.stop());
  const { median: t } = await throughput(ctx, { ...s, nodes: [profiled] }, 1);
  await profiled.stop(); // the profile is written when the process exits
  const file = findProfile(profDir);
  const title = "pg1 CPU profile (one Ferry node on PostgreSQL under `node --cpu-prof`, same load)";
  if (!file) {
    ctx.section(title, "No profile was written (the Ferry child did not exit cleanly).");
    return;
  }
  const run = `Profiled run: ${t.r.deliveredPerSec.toFixed(0)} msg/s delivered (${t.r.detail}); profiling slows it down.`;
  ctx.section(title, `${run}\n\n${profileMarkdown(summarizeProfile(file, 25))}`);
}

/**
 * pg1: one Ferry node on a fresh PostgreSQL cluster with durable defaults (fsync, synchronous_commit on). P1's
 * load → delivered msg/s (ratio to the forwarder ceiling), then publish→arrival p50/p99 at 1,000 msg/s.
 */
export const pg1Scenario: Scenario = {
  id: "pg1",
  title: "PostgreSQL, 1 node",
  needs: ["forwarder", "pgboss"],
  async run(ctx) {
    const s = await setUp(ctx, "pg1", 1);
    const { median: t, spread, rounds: work } = await throughput(ctx, s, rounds(ctx));
    ctx.record({
      key: "pg1.delivered",
      scenario: "PostgreSQL, 1 node",
      metric: "Ferry on PostgreSQL, delivered",
      value: t.r.deliveredPerSec,
      unit: "msg/s",
      detail: throughputDetail(t, s, spread),
    });
    recordWork(ctx, "pg1", "PostgreSQL, 1 node", work);
    await latency(ctx, s, "pg1", "PostgreSQL, 1 node");
    if (!ctx.profile) return;
    await s.nodes[0]!.stop(); // the profiled node alone on the database, as the measured one was
    await profileOneNode(ctx, s);
  },
};

/**
 * pg3 ÷ pg1's PostgreSQL CPU per message, taken apart: a line through the two scenarios' (transactions per message,
 * CPU per message) gives what a transaction costs whatever it holds (R) and what a message costs (m), taking both to
 * be the same in the two scenarios. The floor (3 nodes ÷ 1 ≤ 1.5×) then asks for R ≤ 0.5·m ÷ (t3 − 1.5·t1):
 * in a closed loop a node's transactions hold at most the publishers it serves, so without the write relay the
 * per-transaction cost is what three nodes pay three times as often; with it, the leader's transactions hold the
 * plain writes of all three (docs/postgres.md "The write relay", "Speed").
 */
function splitPerTransaction(ctx: BenchContext): void {
  const [c1, t1, c3, t3] = ["pg1.dbCpu", "pg1.xacts", "pg3.dbCpu", "pg3.xacts"].map((k) => ctx.value(k));
  if (c1 === undefined || t1 === undefined || c3 === undefined || t3 === undefined || t3 <= t1) return;
  const perTransaction = (c3 - c1) / (t3 - t1);
  const perMessage = c1 - t1 * perTransaction;
  const room = t3 - 1.5 * t1;
  const floor =
    room <= 0
      ? "3 nodes ÷ 1 ≤ 1.5× holds whatever a transaction costs at these transactions per message"
      : perMessage <= 0
        ? "the two points give no positive cost per message (a noisy run): no bound per transaction follows"
        : `3 nodes ÷ 1 ≤ 1.5× asks for at most ${formatNumber((0.5 * perMessage) / room)} µs per transaction at these transactions per message`;
  // Two points this close (the relay keeps the transactions per message nearly equal) put the line at the mercy of
  // the noise between two scenarios minutes apart: a cost below zero means it says nothing.
  const line =
    perTransaction <= 0 || perMessage <= 0
      ? "A line through both gives a cost below zero per transaction or per message: at these nearly equal transactions per message the difference is noise, and no split follows."
      : `A line through both: ${formatNumber(perTransaction)} µs per transaction whatever it holds, ${formatNumber(perMessage)} µs per message.`;
  ctx.section(
    "pg3 ÷ pg1: PostgreSQL's CPU per transaction and per message",
    [
      `| | transactions / message | PostgreSQL CPU / message |`,
      `|---|---:|---:|`,
      `| 1 node | ${t1.toFixed(3)} | ${formatNumber(c1)} µs |`,
      `| 3 nodes | ${t3.toFixed(3)} | ${formatNumber(c3)} µs |`,
      "",
      `${line} ${floor} (the write relay's leader commits the plain publishes of all three nodes; without it a node's runs ` +
        "hold at most the publishers it serves: 32 with one node, about 11 each with three).",
    ].join("\n"),
  );
}

/**
 * pg3: three Ferry nodes (three processes, three ports) on ONE PostgreSQL database, publishers spread round-robin
 * over them. Delivered msg/s (ratio to the forwarder and to pg1 of the same run), duplicates counted by message id,
 * then publish→arrival p50/p99 at 1,000 msg/s spread over the three nodes.
 */
export const pg3Scenario: Scenario = {
  id: "pg3",
  title: "PostgreSQL, 3 nodes on one database",
  needs: ["forwarder", "pg1"],
  async run(ctx) {
    const s = await setUp(ctx, "pg3", 3);
    const { median: t, spread, rounds: work } = await throughput(ctx, s, rounds(ctx));
    const scenario = "PostgreSQL, 3 nodes";
    ctx.record({
      key: "pg3.delivered",
      scenario,
      metric: "3 Ferry nodes on one database, delivered",
      value: t.r.deliveredPerSec,
      unit: "msg/s",
      detail: throughputDetail(t, s, spread),
    });
    ctx.record({
      key: "pg3.vsPg1",
      scenario,
      metric: "3 nodes against 1 node",
      value: t.r.deliveredPerSec,
      unit: "msg/s",
      detail: "same figure as above; ratio to pg1 of this run (all nodes share the machine's 2 cores with PostgreSQL)",
    });
    recordWork(ctx, "pg3", scenario, work);
    splitPerTransaction(ctx);
    await latency(ctx, s, "pg3", scenario);
  },
};
