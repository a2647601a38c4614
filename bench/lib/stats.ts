/** Nearest-rank percentile of unsorted samples (p in 0..100); undefined for no samples. */
export function percentile(samples: number[], p: number): number | undefined {
  if (samples.length === 0) return undefined;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function formatNumber(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return "—";
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US");
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** Server CPU per delivered or acknowledged message, in microseconds: comparable even when the run is noisy. */
export function cpuPerMessage(cpuSeconds: number, messages: number): string {
  if (messages <= 0) return "";
  return `${Math.round((cpuSeconds * 1e6) / messages)} µs CPU/msg`;
}
