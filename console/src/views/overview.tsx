import { useMemo, useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { count } from "../lib/format";
import { href } from "../lib/router";
import type { Queue, UsageStats } from "../lib/types";
import { useAsync, useInterval } from "../lib/use-async";
import { Chart, type ChartSeries } from "../components/chart";
import { ErrorBox, Loading, PageHead, Time } from "../components/ui";
import { LimitsTable } from "./limits";

const PERIODS = ["1h", "3h", "12h", "1d", "3d", "7d", "30d"] as const;
const COLORS: Record<string, string> = {
  publishes: "#2563eb",
  delivered: "#16a34a",
  failed: "#dc2626",
  retried: "#d97706",
};

/** Go-style time strings (`2026-11-23 20:15:00 +0000 UTC`) from the stats API to unix seconds. */
function seconds(x: string): number {
  const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)/.exec(x);
  return m ? Date.parse(`${m[1]}T${m[2]}Z`) / 1000 : Date.parse(x) / 1000;
}

export function Overview() {
  const { api, account, refreshAccount } = useApp();
  const [period, setPeriod] = useState<(typeof PERIODS)[number]>("1h");
  const stats = useAsync(() => api.get<UsageStats>("/v2/account/stats", { query: { period } }), [api, period]);
  const queues = useAsync(() => api.get<Queue[]>("/v2/queues"), [api]);
  useInterval(
    () => {
      stats.reload(true);
      queues.reload(true);
      refreshAccount();
    },
    5000,
    true,
  );

  const chart = useMemo(() => {
    if (!stats.data) return undefined;
    const xs = stats.data.daily_used.map((p) => seconds(p.x));
    const series: ChartSeries[] = [
      { label: "Publishes", color: COLORS.publishes!, values: stats.data.daily_used.map((p) => p.y) },
    ];
    for (const s of stats.data.daily_msgsvc_messages) {
      if (s.id === "canceled") continue;
      const label = s.id === "delivered" ? "Deliveries" : s.id === "failed" ? "Failures" : "Retries";
      series.push({ label, color: COLORS[s.id] ?? "#888", values: s.data_points.map((p) => p.y) });
    }
    return { xs, series };
  }, [stats.data]);

  const lag = (queues.data ?? []).reduce((sum, q) => sum + q.lag, 0);
  const quota = account.quota;
  const share = quota.limit ? Math.min(100, (quota.used / quota.limit) * 100) : 0;

  return (
    <>
      <PageHead title="Overview" sub={`Account ${account.accountId} · plan ${account.plan}`} />
      <div class="grid cols-4">
        <div class="panel stat">
          <div class="stat-label">Messages in flight</div>
          <div class="stat-value" data-testid="in-flight">{count(account.inFlight)}</div>
          <div class="stat-foot">
            <a href={href("messages")}>See messages</a>
          </div>
        </div>
        <div class="panel stat">
          <div class="stat-label">Dead letter queue</div>
          <div class="stat-value" data-testid="dlq-size">{count(account.dlqSize)}</div>
          <div class="stat-foot">
            <a href={href("dlq")}>Open the DLQ</a>
          </div>
        </div>
        <div class="panel stat">
          <div class="stat-label">Queue lag</div>
          <div class="stat-value">{queues.data ? count(lag) : "…"}</div>
          <div class="stat-foot">
            {queues.data ? `${queues.data.length} queue${queues.data.length === 1 ? "" : "s"}` : "Loading queues"}
          </div>
        </div>
        <div class="panel stat">
          <div class="stat-label">Daily quota used</div>
          <div class="stat-value">
            {count(quota.used)}
            <span class="muted small"> / {quota.limit === null ? "unlimited" : count(quota.limit)}</span>
          </div>
          {quota.limit !== null && (
            <div class="meter" role="meter" aria-valuenow={quota.used} aria-valuemin={0} aria-valuemax={quota.limit}>
              <span style={{ width: `${share}%` }} />
            </div>
          )}
          <div class="stat-foot">
            Resets <Time ms={quota.resetsAt} rel />
          </div>
        </div>
      </div>

      <section class="panel">
        <div class="panel-head">
          <h2>Usage</h2>
          <div class="seg" role="group" aria-label="Period">
            {PERIODS.map((p) => (
              <button key={p} type="button" aria-pressed={p === period} onClick={() => setPeriod(p)}>
                {p}
              </button>
            ))}
          </div>
        </div>
        {stats.error && <ErrorBox error={stats.error} retry={() => stats.reload()} />}
        {!chart && !stats.error && <Loading />}
        {chart && <Chart xs={chart.xs} series={chart.series} />}
      </section>

      <section class="panel">
        <h2>Plan limits</h2>
        <LimitsTable limits={account.limits} />
      </section>
    </>
  );
}
