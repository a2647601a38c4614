import autocannon from "autocannon";

export interface CannonResult {
  /** 2xx answers per second over the run. */
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  latencyP50: number;
  latencyP99: number;
}

/**
 * autocannon against one URL, bounded by `seconds` and by `maxRequests` (both always apply). Only 2xx answers
 * count: a server that answers errors fast does not look fast.
 */
export async function cannon(opts: {
  url: string;
  connections: number;
  seconds: number;
  maxRequests: number;
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer;
}): Promise<CannonResult> {
  const result = await autocannon({
    url: opts.url,
    connections: opts.connections,
    pipelining: 1,
    duration: opts.seconds,
    maxOverallRequests: Math.max(opts.maxRequests, opts.connections),
    method: opts.method ?? "GET",
    headers: opts.headers ?? {},
    body: opts.body,
    timeout: 30,
  });
  const ok = result["2xx"];
  return {
    rps: ok / Math.max(0.001, result.duration),
    ok,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
  };
}
