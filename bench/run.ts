/**
 * `npm run bench [-- <scenario ids…>] [--quick] [--no-profile] [--keep]`
 * Runs the scenarios (all by default, in the order below; a scenario's references run too), prints one table with
 * the absolute figures and the ratios measured in this run, and writes bench/results/<YYYY-MM-DD>.md
 * (…-quick.md for --quick). See bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setFerryRoot } from "./lib/ferry.js";
import { describeMachine } from "./lib/machine.js";
import { NoiseMeter } from "./lib/noise.js";
import { repoRoot, run } from "./lib/proc.js";
import { judgeAll, markdownTable, textTable } from "./lib/report.js";
import type { BenchContext, Measurement, Scenario } from "./lib/scenario.js";
import { bullmqScenario } from "./scenarios/bullmq.js";
import { fanoutScenario } from "./scenarios/fanout.js";
import { fastifyScenario } from "./scenarios/fastify.js";
import { flowControlScenario } from "./scenarios/flow-control.js";
import { durableForwarderScenario } from "./scenarios/durable-forwarder.js";
import { forwarderScenario } from "./scenarios/forwarder.js";
import { p1Scenario } from "./scenarios/p1-end-to-end.js";
import { p2Scenario } from "./scenarios/p2-ingest.js";
import { p3Scenario } from "./scenarios/p3-latency.js";
import { p4Scenario } from "./scenarios/p4-scale.js";
import { pgbossScenario } from "./scenarios/pgboss.js";
import { pg1Scenario, pg3Scenario } from "./scenarios/postgres.js";
import { pgLeastScenario } from "./scenarios/pg-least.js";
import { sustainedScenario } from "./scenarios/sustained.js";
import { searchScenario } from "./scenarios/search.js";
import { searchPgScenario } from "./scenarios/search-postgres.js";
import { workflowScenario } from "./scenarios/workflow.js";

const scenarios: Scenario[] = [
  fastifyScenario,
  forwarderScenario,
  durableForwarderScenario,
  p1Scenario,
  p2Scenario,
  p3Scenario,
  pg1Scenario,
  pg3Scenario,
  pgLeastScenario,
  bullmqScenario,
  pgbossScenario,
  fanoutScenario,
  flowControlScenario,
  workflowScenario,
  sustainedScenario,
  searchScenario,
  searchPgScenario,
  // Last: the million-message store it writes (1.44 GiB) leaves the machine slower for the scenarios after it, pg3
  // most (its PostgreSQL CPU per message 138 to 146 µs after P4, 100 to 131 without; docs/postgres.md "Speed").
  p4Scenario,
];

const aliases: Record<string, string[]> = {
  ceilings: ["fastify", "forwarder", "durable"],
  peers: ["bullmq", "pgboss"],
  postgres: ["pg1", "pg3", "pgleast"],
};

function parseArgs(argv: string[]) {
  const ferryRoot = argv.find((a) => a.startsWith("--ferry-root="))?.slice("--ferry-root=".length);
  const flags = new Set(argv.filter((a) => a.startsWith("--") && !a.startsWith("--ferry-root=")));
  const known = new Set(["--quick", "--no-profile", "--profile", "--keep", "--help"]);
  for (const f of flags) if (!known.has(f)) throw new Error(`unknown option ${f} (known: ${[...known].join(" ")})`);
  const names = argv.filter((a) => !a.startsWith("--")).flatMap((a) => aliases[a.toLowerCase()] ?? [a.toLowerCase()]);
  for (const n of names) {
    if (!scenarios.some((s) => s.id === n)) {
      const known = [...scenarios.map((s) => s.id), ...Object.keys(aliases)].join(", ");
      throw new Error(`unknown scenario "${n}" (known: ${known})`);
    }
  }
  const wanted = new Set(names.length > 0 ? names : scenarios.filter((s) => !s.optIn).map((s) => s.id));
  // References of a ratio run in the same invocation: a ratio is only ever taken within one run.
  let grew = true;
  while (grew) {
    grew = false;
    for (const s of scenarios) {
      if (!wanted.has(s.id)) continue;
      for (const n of s.needs ?? []) {
        if (!wanted.has(n)) {
          wanted.add(n);
          grew = true;
        }
      }
    }
  }
  const quick = flags.has("--quick");
  return {
    quick,
    // Profiling costs one more P1 run: on by default in full runs, off in quick ones.
    profile: flags.has("--profile") || (!quick && !flags.has("--no-profile")),
    keep: flags.has("--keep"),
    ferryRoot: ferryRoot === undefined ? undefined : resolve(ferryRoot),
    help: flags.has("--help"),
    selected: scenarios.filter((s) => wanted.has(s.id)),
    requested: names,
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(
      `usage: npm run bench [-- <ids…>] [--quick] [--no-profile] [--keep] [--ferry-root=<checkout>]\nscenarios: ${scenarios.map((s) => s.id).join(" ")} (aliases: ${Object.keys(aliases).join(", ")})\n`,
    );
    return;
  }
  setFerryRoot(args.ferryRoot);
  const machine = describeMachine();
  const root = args.ferryRoot ?? repoRoot;
  const commit = await run("git", ["-C", root, "log", "-1", "--format=%h %s"], { timeoutMs: 10_000 });
  machine["Ferry under test"] = `${root} at ${commit.code === 0 ? commit.output.trim() : "(unknown commit)"}`;
  const started = new Date();
  const workDir = mkdtempSync(join(tmpdir(), "ferry-bench-"));
  const measurements: Measurement[] = [];
  const sections: { title: string; body: string }[] = [];
  const loads: string[] = [];
  const log = (message: string) =>
    process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
  log(`scenarios: ${args.selected.map((s) => s.id).join(" ")}${args.quick ? " (quick)" : ""}; scratch ${workDir}`);

  // Interrupted (Ctrl-C, SIGTERM): stop what the current scenario started (PostgreSQL is a daemon, it would
  // outlive the bench), then leave.
  let cleanups: (() => Promise<unknown> | unknown)[] = [];
  let interrupted = false;
  const interrupt = (signal: string) => {
    interrupted = true;
    log(`${signal}: stopping what this scenario started …`);
    const pending = cleanups.reverse();
    cleanups = [];
    void (async () => {
      for (const cleanup of pending) await Promise.resolve(cleanup()).catch(() => undefined);
      if (!args.keep) rmSync(workDir, { recursive: true, force: true });
      process.exit(130);
    })();
  };
  process.once("SIGINT", () => interrupt("SIGINT"));
  process.once("SIGTERM", () => interrupt("SIGTERM"));

  for (const scenario of args.selected) {
    cleanups = [];
    const ctx: BenchContext = {
      quick: args.quick,
      profile: args.profile,
      workDir,
      log: (m) => log(`${scenario.id}: ${m}`),
      record: (m) => {
        measurements.push(m);
        log(
          `${scenario.id}: ${m.metric} = ${m.skipped ? `skipped (${m.skipped})` : `${m.value?.toFixed(1)} ${m.unit}`}`,
        );
      },
      value: (key) => measurements.find((m) => m.key === key)?.value,
      section: (title, body) => sections.push({ title, body }),
      defer: (cleanup) => cleanups.push(cleanup),
    };
    const t0 = Date.now();
    log(`${scenario.id}: ${scenario.title} …`);
    const noise = new NoiseMeter(workDir);
    let cpu: ReturnType<NoiseMeter["stop"]> | undefined;
    try {
      await scenario.run(ctx);
      cpu = noise.stop();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`${scenario.id}: FAILED: ${message}`);
      measurements.push({
        key: `${scenario.id}.error`,
        scenario: scenario.title,
        metric: "(scenario failed)",
        value: undefined,
        unit: "",
        skipped: `failed: ${message.split("\n")[0]}`,
      });
    } finally {
      cpu ??= noise.stop();
      for (const cleanup of cleanups.splice(0).reverse()) {
        try {
          await cleanup();
        } catch (error) {
          log(`${scenario.id}: cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
    // Interrupted: the handler is stopping the children and will exit; write no results from a torn run.
    if (interrupted) await new Promise(() => {});
    const busy = `bench ${cpu.ours.toFixed(2)}, others ${cpu.others.toFixed(2)}`;
    loads.push(`| ${scenario.id} | ${cpu.ours.toFixed(2)} | ${cpu.others.toFixed(2)} |`);
    log(`${scenario.id}: done in ${((Date.now() - t0) / 1000).toFixed(0)} s (cores used: ${busy})`);
  }

  // P1's figure again beside the references it is read against (their ratios are in goals.ts), when they ran.
  const p1 = measurements.find((m) => m.key === "p1.delivered");
  const besides = [
    {
      key: "peers.ferryEverysec",
      after: ["bullmq.delivered"],
      scenario: "Peers",
      metric: "Ferry (P1 figure) vs BullMQ, Redis appendfsync everysec",
    },
    {
      key: "peers.ferryAlways",
      after: ["bullmqAlways.delivered"],
      scenario: "Peers",
      metric: "Ferry (P1 figure) vs BullMQ, Redis appendfsync always",
    },
    {
      key: "peers.ferryPgboss",
      after: ["pgboss.delivered"],
      scenario: "Peers",
      metric: "Ferry (P1 figure) vs pg-boss",
    },
    {
      key: "durable.ferry",
      after: ["durable.delivered", "durable.bound", "durableBare.delivered", "durableBare.bound"],
      scenario: "Ceiling",
      metric: "Ferry (P1 figure) vs the durable forwarder",
    },
  ];
  for (const b of besides) {
    const at = measurements.findLastIndex((m) => b.after.includes(m.key));
    if (p1?.value !== undefined && at >= 0) measurements.splice(at + 1, 0, { ...p1, ...b, detail: "" });
  }

  const rows = judgeAll(measurements);
  const elapsed = (Date.now() - started.getTime()) / 1000;
  process.stdout.write(`\n${textTable(rows)}\n\nTotal ${elapsed.toFixed(0)} s.\n`);

  const date = started.toISOString().slice(0, 10);
  const resultsDir = new URL("./results/", import.meta.url).pathname;
  mkdirSync(resultsDir, { recursive: true });
  // A full run owns <date>.md; a subset or a quick run gets its own name so it never overwrites it.
  const subset = args.requested.length > 0 ? `-${args.requested.join("+")}` : "";
  const file = join(resultsDir, `${date}${subset}${args.quick ? "-quick" : ""}.md`);
  const markdown = [
    `# Ferry bench, ${date}${args.quick ? " (quick mode: small counts, checks the harness only)" : ""}`,
    "",
    `Command: \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}\`, started ${started.toISOString()}, took ${elapsed.toFixed(0)} s.`,
    "",
    "## Machine",
    "",
    ...Object.entries(machine).map(([k, v]) => `- ${k}: ${v}`),
    `- load average at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
    "",
    "Other helpers run tests on this 2-core machine at the same time, so absolute figures are noisy (the machine " +
      "swings ±25% between runs); the ratios are taken within this one run. Generator, receiver, servers and peers " +
      "share the 2 cores.",
    "",
    "Cores in use on average during each scenario (of 2): the bench's own processes (generator, receiver, " +
      "servers, peers) and everything else on the machine. Where `others` is well above 0, the scenario's " +
      "absolute figures (and latencies most of all) were disturbed.",
    "",
    "| Scenario | bench | others |",
    "|---|---:|---:|",
    ...loads,
    "",
    "## Results",
    "",
    markdownTable(rows),
    "",
    ...sections.flatMap((s) => [`## ${s.title}`, "", s.body, ""]),
  ].join("\n");
  writeFileSync(file, markdown);
  process.stdout.write(`Results written to ${file}\n`);
  if (!args.keep) rmSync(workDir, { recursive: true, force: true });
  else process.stdout.write(`Scratch kept in ${workDir}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
