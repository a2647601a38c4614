/**
 * The arithmetic of the console's health read-out (docs/console.md "Health"), pure: percentiles of a latency sample,
 * the success rate, and what a failed attempt's log entry says went wrong.
 */

/** The nearest-rank percentile (`p` in 0..100) of `values`; null for an empty sample. Does not change `values`. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Delivered out of the messages that ended delivered or failed (cancelled ones are neither); null when none did. */
export function successRate(delivered: number, failed: number): number | null {
  const ended = delivered + failed;
  return ended === 0 ? null : delivered / ended;
}

/** How many bytes of a failed attempt's response body the read-out quotes. */
export const BODY_START_BYTES = 200;

export interface FailureCause {
  /** The delivery's own words: `destination answered 500`, `connect ECONNREFUSED 127.0.0.1:9`, a timeout. */
  error: string;
  /** The destination's status; absent when it never answered. */
  status?: number;
  /** The start of the response body as text (at most BODY_START_BYTES bytes). */
  bodyStart?: string;
}

/** The cause of a failed attempt from its ERROR or FAILED entry's details (JSON: error, responseStatus, responseBody). */
export function failureCause(detailsJson: string): FailureCause {
  let d: { error?: unknown; responseStatus?: unknown; responseBody?: unknown } = {};
  try {
    d = JSON.parse(detailsJson) as typeof d;
  } catch {
    // An entry whose details cannot be read still names its URL in the ranking.
  }
  const cause: FailureCause = { error: typeof d.error === "string" ? d.error : "delivery failed" };
  if (typeof d.responseStatus === "number") cause.status = d.responseStatus;
  if (typeof d.responseBody === "string" && d.responseBody !== "") {
    const bytes = Buffer.from(d.responseBody, "base64");
    cause.bodyStart = bytes.subarray(0, BODY_START_BYTES).toString("utf8");
  }
  return cause;
}
