import {
  goTimeString,
  monthWindow,
  periodWindow,
  type StatsPeriod,
  type Window,
  weekdayNames,
} from "../domain/stats-period.js";
import type { UsageBucket } from "../store/management-store.js";
import type { Account } from "../domain/records.js";
import type { UsageMetric } from "../store/store.js";
import type { Services } from "./context.js";

export interface Point {
  x: string;
  y: number;
}

export interface Series {
  id: string;
  data_points: Point[];
}

/**
 * Seed 2.3. The workflow fields count runs started and workflow messages published (docs/workflows.md "Statistics"),
 * from the usage counters the run writes share their transactions with.
 */
export interface UsageStats {
  days: string[];
  daily_requests: (Point & { workflow_message: number; workflow_run: number })[];
  daily_billings: Point[];
  daily_bandwidths: Point[];
  daily_used: Point[];
  daily_used_workflow: Point[];
  daily_msgsvc_messages: Series[];
  daily_workflow_messages: Series[];
  dlq_message_count: number;
  daily_bandwidth_used: Point[];
  total_monthly_billing: number;
}

/** Message series by metric id, in this order. */
const MESSAGE_METRICS: UsageMetric[] = ["delivered", "failed", "retried", "canceled"];
/** Workflow series by metric id: runs started, workflow messages published. */
const WORKFLOW_METRICS = ["workflow_run", "workflow_message"] as const;

/** Per-bucket sums of one metric (`count`), or of the bytes of every metric (`bytes`: bandwidth in and out). */
function column(rows: UsageBucket[], w: Window, pick: (r: UsageBucket) => number): number[] {
  const values = new Array<number>(w.points).fill(0);
  for (const r of rows) if (r.bucket >= 0 && r.bucket < w.points) values[r.bucket]! += pick(r);
  return values;
}

const points = (w: Window, values: number[]): Point[] =>
  values.map((y, i) => ({ x: goTimeString(w.from + i * w.stepMs), y }));

/** Dollars, rounded to a millionth so sums do not carry float noise. */
const money = (value: number): number => Math.round(value * 1e6) / 1e6;

/**
 * Usage statistics of one account from the per-minute usage counters, which are written in the same transactions
 * as the publishes and outcomes they count: `requests` (accepted messages, callbacks included, with body bytes),
 * `delivered` (with body bytes), `failed`, `retried`, `canceled`. Bandwidth is the bytes received plus delivered.
 */
export async function usageStats(services: Services, account: Account, period: StatsPeriod): Promise<UsageStats> {
  const { store, clock, config } = services;
  const now = clock.now();
  const win = periodWindow(period, now);
  const month = monthWindow(now);
  const [periodRows, monthRows, dlq] = await Promise.all([
    store.usageBuckets({ accountId: account.id, from: win.from, stepMs: win.stepMs, count: win.points }),
    store.usageBuckets({ accountId: account.id, from: month.from, stepMs: month.stepMs, count: month.points }),
    store.accountDlqCount({ accountId: account.id }),
  ]);
  const requests = (r: UsageBucket) => (r.metric === "requests" ? r.count : 0);
  const bytes = (r: UsageBucket) => r.bytes;

  const pricePerMessage = account.plan === "free" ? 0 : config.pricePer100k / 100_000;
  const monthRequests = column(monthRows, month, requests);
  const metric = (m: UsageMetric) => (r: UsageBucket) => (r.metric === m ? r.count : 0);
  const monthWorkflowMessages = column(monthRows, month, metric("workflow_message"));
  const monthWorkflowRuns = column(monthRows, month, metric("workflow_run"));
  const billings = monthRequests.map((n) => money(n * pricePerMessage));
  return {
    days: weekdayNames(month),
    daily_requests: points(month, monthRequests).map((p, i) => ({
      ...p,
      workflow_message: monthWorkflowMessages[i] ?? 0,
      workflow_run: monthWorkflowRuns[i] ?? 0,
    })),
    daily_billings: points(month, billings),
    daily_bandwidths: points(month, column(monthRows, month, bytes)),
    daily_used: points(win, column(periodRows, win, requests)),
    daily_used_workflow: points(win, column(periodRows, win, metric("workflow_message"))),
    daily_msgsvc_messages: MESSAGE_METRICS.map((metric) => ({
      id: metric,
      data_points: points(
        win,
        column(periodRows, win, (r) => (r.metric === metric ? r.count : 0)),
      ),
    })),
    daily_workflow_messages: WORKFLOW_METRICS.map((id) => ({ id, data_points: points(win, column(periodRows, win, metric(id))) })),
    dlq_message_count: dlq,
    daily_bandwidth_used: points(win, column(periodRows, win, bytes)),
    total_monthly_billing: money(billings.reduce((a, b) => a + b, 0)),
  };
}
