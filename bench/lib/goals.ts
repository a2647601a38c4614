import type { Measurement } from "./scenario.js";

/**
 * The goals, attached to measurement keys. A ratio goal divides the figure by a reference figure of the
 * same run (`of` may list several keys: the best of them is the reference, e.g. the best peer). A ratio without
 * `atLeast` is only shown (the issue sets no goal for it). `floor`: the lower mark the issue asks for before its goal
 * (issue 29); the Met column then says `floor` when only that is reached.
 */
export type Goal =
  | { kind: "ratio"; of: string[]; label: string; atLeast?: number; atMost?: number; floor?: number }
  | { kind: "absolute"; atMost?: number; atLeast?: number };

export const goals: Record<string, Goal> = {
  "p1.delivered": { kind: "ratio", of: ["forwarder.delivered"], label: "× forwarder", atLeast: 0.6 },
  // Throughput goals of the performance issue: P2 against the forwarder's acknowledgements (an ingest path that
  // stores nothing), PostgreSQL against pg-boss, three nodes against one. The floors for calling it resolved are
  // P1 ≥ 0.6× the forwarder and pg1 ≥ 1.0× pg-boss; the table judges the full goals.
  "p2.acks": { kind: "ratio", of: ["forwarder.acks"], label: "× forwarder's acks", atLeast: 0.5 },
  // The durable forwarder (bench/apps/durable-forwarder.ts) bounds what any design writing Ferry's rows reaches.
  "durable.delivered": { kind: "ratio", of: ["forwarder.delivered"], label: "× forwarder" },
  "durable.bound": { kind: "ratio", of: ["forwarder.delivered"], label: "× forwarder" },
  "durableBare.delivered": { kind: "ratio", of: ["forwarder.delivered"], label: "× forwarder" },
  "durableBare.bound": { kind: "ratio", of: ["forwarder.delivered"], label: "× forwarder" },
  "durable.ferry": { kind: "ratio", of: ["durable.delivered"], label: "× durable forwarder", atLeast: 0.9 },
  "p1.inline": { kind: "ratio", of: ["p1.delivered"], label: "× P1 (egress thread on)" },
  "p3.p50": { kind: "absolute", atMost: 5 },
  // Workflows (issue 25): 3-step steps/s against P1's msg/s, step latency, a 50-step run's late CPU per step.
  "workflow.steps3": { kind: "ratio", of: ["p1.delivered"], label: "× P1", atLeast: 0.6 },
  "workflow.steps50": { kind: "ratio", of: ["p1.delivered"], label: "× P1" },
  "workflow.p99": { kind: "absolute", atMost: 25 },
  "workflow.lateCpu": { kind: "absolute", atMost: 3 },
  "p3.p99": { kind: "absolute", atMost: 25 },
  "p3.late99": { kind: "absolute", atMost: 100 },
  "p4.acks": { kind: "ratio", of: ["p4.emptyAcks"], label: "× empty store", atLeast: 0.9 },
  "p4.rss": { kind: "absolute", atMost: 300 },
  "pg1.delivered": { kind: "ratio", of: ["pgboss.delivered"], label: "× pg-boss", atLeast: 2 },
  "pg3.delivered": { kind: "ratio", of: ["forwarder.delivered"], label: "× forwarder" },
  "pg3.vsPg1": { kind: "ratio", of: ["pg1.delivered"], label: "× 1 node (pg1)", atLeast: 1 },
  // Issue 29: the database's work per message must not grow with the nodes (floor ≤ 1.5×, goal 1.1×).
  "pg3.dbCpu": { kind: "ratio", of: ["pg1.dbCpu"], label: "× 1 node (pg1)", atMost: 1.5 },
  "pg3.xacts": { kind: "ratio", of: ["pg1.xacts"], label: "× 1 node (pg1)" },
  // The same ratio for the least per-node design (bench/scenarios/pg-least.ts): the floor of pg3.dbCpu's ratio for
  // any design where each node commits its own transactions.
  "pgleast.three": { kind: "ratio", of: ["pgleast.one"], label: "× 1 writer" },
  // Search data plane (docs/search.md): ingest against the raw store's inserts, query latency at 100,000 documents.
  "search.ingest10k": { kind: "ratio", of: ["search.raw10k"], label: "× raw store", atLeast: 0.5 },
  "search.ingest100k": { kind: "ratio", of: ["search.raw100k"], label: "× raw store", atLeast: 0.5 },
  "search.p99at100k": { kind: "absolute", atMost: 50 },
  // Issue 29: P1 against BullMQ at each Redis AOF policy, with the floor to resolve and the goal.
  "peers.ferryEverysec": {
    kind: "ratio",
    of: ["bullmq.delivered"],
    label: "× BullMQ (appendfsync everysec)",
    atLeast: 1.5,
    floor: 1.0,
  },
  "peers.ferryAlways": {
    kind: "ratio",
    of: ["bullmqAlways.delivered"],
    label: "× BullMQ (appendfsync always)",
    atLeast: 2.0,
    floor: 1.3,
  },
  "peers.ferryPgboss": { kind: "ratio", of: ["pgboss.delivered"], label: "× pg-boss" },
};

export interface Judged {
  ratio?: number;
  ratioLabel?: string;
  goal?: string;
  met?: boolean;
  /** The goal's floor is reached (set only when the goal has one). */
  floorMet?: boolean;
}

/** Ratio (if any) and whether the goal is met, from the figures of this run only. */
export function judge(m: Measurement, values: (key: string) => number | undefined): Judged {
  const goal = goals[m.key];
  if (!goal || m.value === undefined) return {};
  if (goal.kind === "absolute") {
    const parts: string[] = [];
    let met = true;
    if (goal.atMost !== undefined) {
      parts.push(`≤ ${goal.atMost} ${m.unit}`);
      met &&= m.value <= goal.atMost;
    }
    if (goal.atLeast !== undefined) {
      parts.push(`≥ ${goal.atLeast} ${m.unit}`);
      met &&= m.value >= goal.atLeast;
    }
    return { goal: parts.join(", "), met };
  }
  const refs = goal.of.map(values).filter((v): v is number => v !== undefined && v > 0);
  const wanted =
    goal.atLeast !== undefined ? `≥ ${goal.atLeast}` : goal.atMost !== undefined ? `≤ ${goal.atMost}` : "";
  if (refs.length === 0) return { goal: `${wanted}${goal.label} (reference not measured)` };
  const ratio = m.value / Math.max(...refs);
  if (goal.atLeast === undefined && goal.atMost !== undefined) {
    return { ratio, ratioLabel: goal.label, goal: wanted, met: ratio <= goal.atMost };
  }
  if (goal.atLeast === undefined) return { ratio, ratioLabel: goal.label };
  if (goal.floor === undefined) return { ratio, ratioLabel: goal.label, goal: wanted, met: ratio >= goal.atLeast };
  return {
    ratio,
    ratioLabel: goal.label,
    goal: `${wanted} (floor ≥ ${goal.floor})`,
    met: ratio >= goal.atLeast,
    floorMet: ratio >= goal.floor,
  };
}
