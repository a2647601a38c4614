import type { RunPace } from "./write-batcher.js";

/**
 * The cadence of a node's publish runs when several nodes publish for the same accounts (docs/postgres.md "Group
 * commit across nodes"). A node alone starts its next publish run as soon as the previous one committed, so a run
 * holds what arrived during one commit. With k nodes sharing the load, each node's runs hold a k-th of that and the
 * database runs k times the transactions, statements and commits for the same messages. So a busy node spaces its
 * runs by k of its run durations: the cluster then commits about one publish run per run duration, as one node does,
 * and each run holds about k times more. A node whose last run held a single publish is not busy: its next run
 * starts at once, so latency at low load does not change.
 *
 * k is the number of nodes holding a live share of the accounts this node publishes for (flow_shares, migration
 * 067, returned by the fast path with each run): the nodes that publish for them now. Accounts without shares (a
 * small bound) count as one node: no pacing.
 */

/** The longest a publish run is held back after the start of the previous one. */
export const MAX_PACE_MS = 20;

let writers = 1;

/** Told by the fast path (flow-fast-path.ts) how many nodes publish for the account it just served. */
export function noteWriters(nodes: number): void {
  writers = Math.max(1, nodes);
}

/** write-batcher.ts RunPace for publish runs: `writers` run durations between starts, once the node is busy. */
export const publishRunPace: RunPace = ({ runMs, lastRunOps }) =>
  lastRunOps < 2 || writers <= 1 ? 0 : Math.min(MAX_PACE_MS, writers * runMs);
