import type { Queue, Topic } from "../../domain/records.js";

/**
 * `{name, createdAt, updatedAt, endpoints:[{name?, url}]}` plus `headers` when defaults are set (docs/url-groups.md).
 */
export function topicRecord(t: Topic): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: t.name,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    endpoints: t.endpoints.map((e) => (e.name !== undefined ? { name: e.name, url: e.url } : { url: e.url })),
  };
  if (t.headers && Object.keys(t.headers).length > 0) out.headers = t.headers;
  return out;
}

/** Every key is always present, zeros included: the Python SDK requires all of them (docs/queues.md). */
export function queueRecord(q: Queue): Record<string, unknown> {
  return {
    name: q.name,
    createdAt: q.createdAt,
    updatedAt: q.updatedAt,
    parallelism: q.parallelism,
    lag: q.lag,
    paused: q.paused,
  };
}
