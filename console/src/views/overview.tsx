import { useMemo, useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { count } from "../lib/format";
import { href } from "../lib/router";
import type { AccountHealth, Queue, UsageStats } from "../lib/types";
import { useAsync, useInterval } from "../lib/use-async";
import { durationText, percentText } from "../lib/when";
import { Chart, type ChartSeries } from "../components/chart";
import { ErrorBox, Loading, PageHead, Time } from "../components/ui";
import { DestinationFailures } from "./overview-destinations";
import { GettingStarted } from "./getting-started";

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

const published = (stats: UsageStats | undefined) => (stats ? stats.daily_used.reduce((n, p) => n + p.y, 0) : 0);

export function Overview() {
  const { api, account, refreshAccount } = useApp();
  const [period, setPeriod] = useState<(typeof PERIODS)[number]>("1h");
  const stats = useAsync(() => api.get<UsageStats>("/v2/account/stats", { query: { period } }), [api, period]);
  const health = useAsync(() => api.get<AccountHealth>("/v2/account/health", { query: { period } }), [api, period]);
  const queues = useAsync(() => api.get<Queue[]>("/v2/queues"), [api]);
  // Read once: an account that published nothing in 30 days, and holds nothing, is shown how to start.
  const month = useAsync(() => api.get<UsageStats>("/v2/account/stats", { query: { period: "30d" } }), [api]);
  useInterval(
    () => {
      stats.reload(true);
      health.reload(true);
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
  const empty =
    month.data !== undefined &&
    stats.data !== undefined &&
    published(month.data) === 0 &&
    published(stats.data) === 0 &&
    account.inFlight === 0 &&
    account.dlqSize === 0;
  const h = health.data;

  return (
    <>
      <PageHead title="Overview" sub={`Account ${account.accountId} · plan ${account.plan}`}>
        <div class="seg" role="group" aria-label="Period">
          {PERIODS.map((p) => (
            <button key={p} type="button" aria-pressed={p === period} onClick={() => setPeriod(p)}>
              {p}
            </button>
          ))}
        </div>
      </PageHead>

      {empty && <GettingStarted />}

      <div class="grid cols-3">
        <div class="panel stat" data-testid="success-rate">
          <div class="stat-label">Success rate · {period}</div>
          <div class="stat-value">{h ? (h.successRate === null ? "–" : percentText(h.successRate)) : "…"}</div>
          <div class="stat-foot">
            {h ? `${count(h.delivered)} delivered · ${count(h.failed)} failed` : "Loading"}
          </div>
        </div>
        <div class="panel stat" data-testid="latency">
          <div class="stat-label">Publish → delivery · {period}</div>
          <div class="stat-value">
            {h ? (h.latency.p50 === null ? "–" : durationText(h.latency.p50)) : "…"}
            {h?.latency.p50 !== null && h?.latency.p50 !== undefined && <span class="muted small"> p50</span>}
          </div>
          <div class="stat-foot">
            {h && h.latency.p99 !== null
              ? `p99 ${durationText(h.latency.p99)} · ${h.latency.sampleCapped ? "newest " : ""}${count(h.latency.sample)} deliveries`
              : "No deliveries in this period"}
          </div>
        </div>
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
            {queues.data ? (
              <a href={href("queues")}>
                {queues.data.length} queue{queues.data.length === 1 ? "" : "s"}
              </a>
            ) : (
              "Loading queues"
            )}
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
            Resets <Time ms={quota.resetsAt} rel /> · limits in <a href={href("settings")}>Settings</a>
          </div>
        </div>
      </div>

      {!empty && (
        <>
          <section class="panel flush" data-testid="destinations">
            <div class="panel-head padded">
              <h2>Destinations by failures · {period}</h2>
              {h?.destinationsCapped && <span class="muted small">from the newest 10,000 failed attempts</span>}
            </div>
            {health.error && <ErrorBox error={health.error} retry={() => health.reload()} />}
            {!h && !health.error && <Loading />}
            {h && (
              <DestinationFailures destinations={h.destinations} period={period} delivered={h.delivered + h.failed > 0} />
            )}
          </section>

          <section class="panel">
            <div class="panel-head">
              <h2>Usage · {period}</h2>
            </div>
            {stats.error && <ErrorBox error={stats.error} retry={() => stats.reload()} />}
            {!chart && !stats.error && <Loading />}
            {chart && <Chart xs={chart.xs} series={chart.series} />}
          </section>
        </>
      )}
    </>
  );
}
