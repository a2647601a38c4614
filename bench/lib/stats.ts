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
  return `${microsPerMessage(cpuSeconds, messages)} µs CPU/msg`;
}

/** CPU seconds spread over `messages`, in whole µs per message. */
export function microsPerMessage(cpuSeconds: number, messages: number): number {
  return Math.round((cpuSeconds * 1e6) / Math.max(1, messages));
}

/**
 * Repeats a measurement `n` times and keeps the median run (by `value`); the spread goes into the detail. The
 * machine is shared and swings, so one run can be an outlier; the median of a few is steadier.
 */
export async function medianOf<T>(
  n: number,
  measure: (round: number) => Promise<T>,
  value: (r: T) => number,
): Promise<{ median: T; values: number[]; spread: string }> {
  const runs: T[] = [];
  for (let round = 0; round < n; round++) runs.push(await measure(round));
  const sorted = [...runs].sort((a, b) => value(a) - value(b));
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  const values = runs.map(value);
  const spread = n > 1 ? `median of ${n} runs (${values.map((v) => formatNumber(v)).join(", ")})` : "one run";
  return { median, values, spread };
}
