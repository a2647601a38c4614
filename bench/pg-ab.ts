/**
 * A/B of Ferry on PostgreSQL, one node, under pg1's load (bench/scenarios/postgres.ts): each variant (a checkout
 * and extra environment) gets its own database in ONE throwaway cluster and its own node; their rounds alternate,
 * so a change in the machine's load hits every variant alike. Prints, per variant, the median delivered msg/s,
 * CPU per message (Ferry, PostgreSQL), the cores the round kept busy (Ferry + PostgreSQL + generator + receiver
 * over the round's wall time), the node's write syscalls and both sides' voluntary context switches per message
 * (/proc: they count round trips and wake-ups, which depend far less on the machine's load than msg/s), and the
 * database's transactions and statements per message. The node's stderr is in its data directory (ferry.log).
 *
 *   node --import tsx bench/pg-ab.ts --rounds=3 base=/tmp/ferry-base new=. new-env:FERRY_X=1
 *   node --import tsx bench/pg-ab.ts one=. three=. three-nodes:3    # pg1 against pg3's layout, rounds alternating
 *
 * With `<label>-set:NAME=VALUE` the variant's database gets a server setting (ALTER DATABASE … SET), e.g.
 * `new-set:plan_cache_mode=force_generic_plan`.
 *
 * With `<label>-publishers:N` the variant's closed loop has N publishers instead of pg1's 32: one node with 11
 * publishers holds about as many publishes per run as each of pg3's three nodes.
 *
 * With `<label>-nodes:N` a variant runs N nodes on its database (publishers round-robin over them): CPU per message
 * counts every node; write syscalls and the node's context switches are its first node's.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { deliveryRun, type DeliveryRunResult } from "./lib/delivery-run.js";
import { type FerryProcess, publishRequest, setFerryRoot, startFerry } from "./lib/ferry.js";
import { makeBody } from "./lib/generator.js";
import { PgWorkMeter, statementTable, workBetween, workPerMessage } from "./lib/pg-stats.js";
import { CpuMeter } from "./lib/proc.js";
import { BenchReceiver } from "./lib/receiver.js";
import { childrenOf, startPostgres } from "./lib/services.js";

/** Write syscalls and voluntary context switches of a process (all its threads), from /proc. */
function procCounts(pid: number): { writes: number; switches: number } {
  let writes = 0;
  let switches = 0;
  try {
    writes = Number(/syscw: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? 0);
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
      switches += Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
    }
  } catch {
    // gone
  }
  return { writes, switches };
}
interface Variant {
  label: string;
  root: string;
  env: Record<string, string>;
  /** Server settings for the variant's database (`<label>-set:NAME=VALUE`: ALTER DATABASE … SET). */
  settings: [string, string][];
  /** Ferry nodes on the variant's database (`<label>-nodes:N`), publishers spread over them round-robin as pg3's. */
  nodes: number;
  /** The closed loop's publishers (`<label>-publishers:N`; default 32, pg1's and pg3's). */
  publishers: number;
  node?: FerryProcess;
  others: FerryProcess[];
  url?: string;
  runs: { r: DeliveryRunResult; ferry: number; db: number; cores: number; fw: number; fs: number; ds: number }[];
}

const args = process.argv.slice(2);
const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.slice(9) ?? "3");
const total = Number(args.find((a) => a.startsWith("--total="))?.slice(8) ?? "20000");
const showStatements = args.includes("--statements");
const variants: Variant[] = [];
for (const a of args.filter((x) => !x.startsWith("--"))) {
  const envMatch = /^([\w-]+)-env:(\w+)=(.*)$/.exec(a);
  if (envMatch) {
    variants.find((v) => v.label === envMatch[1])!.env[envMatch[2]!] = envMatch[3]!;
    continue;
  }
  const setMatch = /^([\w-]+)-set:(\w+)=(.*)$/.exec(a);
  if (setMatch) {
    variants.find((v) => v.label === setMatch[1])!.settings.push([setMatch[2]!, setMatch[3]!]);
    continue;
  }
  const publishersMatch = /^([\w-]+)-publishers:(\d+)$/.exec(a);
  if (publishersMatch) {
    variants.find((v) => v.label === publishersMatch[1])!.publishers = Number(publishersMatch[2]);
    continue;
  }
  const nodesMatch = /^([\w-]+)-nodes:(\d+)$/.exec(a);
  if (nodesMatch) {
    variants.find((v) => v.label === nodesMatch[1])!.nodes = Number(nodesMatch[2]);
    continue;
  }
  const [label, root] = a.split("=");
  variants.push({ label: label!, root: resolve(root!), env: {}, settings: [], nodes: 1, publishers: 32, others: [], runs: [] });
}

const workDir = mkdtempSync(join(tmpdir(), "ferry-pgab-"));
const log = (m: string) => console.log(`[pg-ab] ${m}`);
const server = await startPostgres(workDir, log);
const receiver = await BenchReceiver.start();
const postmaster = server.pid();
const dbPids = () => [postmaster, ...childrenOf(postmaster)];
try {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  for (const v of variants) {
    await admin.query(`CREATE DATABASE ${v.label.replace(/\W/g, "_")}`);
    for (const [name, value] of v.settings) {
      await admin.query(`ALTER DATABASE ${v.label.replace(/\W/g, "_")} SET ${name} = '${value.replace(/'/g, "''")}'`);
    }
    const u = new URL(server.url);
    u.pathname = `/${v.label.replace(/\W/g, "_")}`;
    v.url = u.toString();
    setFerryRoot(v.root);
    v.node = await startFerry({ workDir, name: v.label, env: { DATABASE_URL: v.url, ...v.env } });
    for (let i = 1; i < v.nodes; i++) {
      v.others.push(await startFerry({ workDir, name: `${v.label}-${i + 1}`, env: { DATABASE_URL: v.url, ...v.env } }));
    }
  }
  await admin.end();
  const body = makeBody(1024);
  const once = async (v: Variant, n: number) => {
    const destination = receiver.url(`/${v.label}`);
    const db = new CpuMeter(dbPids);
    const nodePids = [v.node!.child.pid, ...v.others.map((o) => o.child.pid)];
    const all = new CpuMeter(() => [...nodePids, ...dbPids(), receiver.pid]);
    const f0 = procCounts(v.node!.child.pid);
    const d0 = new Map(dbPids().map((p) => [p, procCounts(p).switches]));
    const r = await deliveryRun({
      origin: v.others.length === 0 ? v.node!.origin : [v.node!.origin, ...v.others.map((o) => o.origin)],
      receiver,
      serverPids: [...nodePids, ...dbPids()],
      concurrency: v.publishers,
      total: n,
      maxMs: 60_000,
      drainMs: 60_000,
      make: () => publishRequest(destination, body),
    });
    const dbCpu = db.read().servers;
    const f1 = procCounts(v.node!.child.pid);
    let ds = 0;
    for (const p of dbPids()) ds += procCounts(p).switches - (d0.get(p) ?? 0);
    const a = all.read();
    const seconds = r.seconds;
    return {
      r,
      ferry: ((r.serverCpu - dbCpu) * 1e6) / r.delivered,
      db: (dbCpu * 1e6) / r.delivered,
      cores: (a.servers + a.bench) / seconds,
      fw: (f1.writes - f0.writes) / r.delivered,
      fs: (f1.switches - f0.switches) / r.delivered,
      ds: ds / r.delivered,
    };
  };
  for (const v of variants) await once(v, 500);
  const meters = new Map<Variant, { meter: PgWorkMeter; before: Awaited<ReturnType<PgWorkMeter["read"]>> }>();
  for (const v of variants) {
    const meter = await PgWorkMeter.open(v.url!);
    meters.set(v, { meter, before: await meter.read() });
  }
  for (let i = 0; i < rounds; i++) {
    for (const v of i % 2 === 0 ? variants : [...variants].reverse()) {
      const t = await once(v, total);
      v.runs.push(t);
      log(
        `${v.label} round ${i + 1}: ${t.r.deliveredPerSec.toFixed(0)} msg/s, Ferry ${t.ferry.toFixed(0)} µs, PG ${t.db.toFixed(0)} µs, ${t.cores.toFixed(2)} cores, writes ${t.fw.toFixed(2)}, sw ${t.fs.toFixed(2)}/${t.ds.toFixed(2)}; ${t.r.detail}`,
      );
    }
  }
  for (const v of variants) {
    const { meter, before } = meters.get(v)!;
    const w = workBetween(before, await meter.read());
    await meter.close();
    const delivered = v.runs.reduce((s, t) => s + t.r.delivered, 0);
    const sorted = [...v.runs].sort((a, b) => a.r.deliveredPerSec - b.r.deliveredPerSec);
    const med = sorted[Math.floor(sorted.length / 2)]!;
    const mean = (f: (t: Variant["runs"][number]) => number) => v.runs.reduce((s, t) => s + f(t), 0) / v.runs.length;
    log(
      `${v.label}: median ${med.r.deliveredPerSec.toFixed(0)} msg/s (${v.runs.map((t) => t.r.deliveredPerSec.toFixed(0)).join(", ")}); mean Ferry ${mean((t) => t.ferry).toFixed(0)} µs, PG ${mean((t) => t.db).toFixed(0)} µs, cores ${mean((t) => t.cores).toFixed(2)}; Ferry writes/msg ${mean((t) => t.fw).toFixed(2)}, Ferry switches/msg ${mean((t) => t.fs).toFixed(2)}, PG switches/msg ${mean((t) => t.ds).toFixed(2)}; ${workPerMessage(w, delivered)}`,
    );
    if (showStatements) console.log(statementTable(w, delivered, 12));
  }
} finally {
  for (const v of variants) {
    await v.node?.stop();
    for (const o of v.others) await o.stop();
  }
  await receiver.close();
  await server.stop();
}
