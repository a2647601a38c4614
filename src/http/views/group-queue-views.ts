import type { Queue as QueueRow, Topic as TopicRow } from "../../domain/records.js";
import type { Queue, Topic } from "../schemas/groups-queues.js";

/** A URL group's wire shape: `headers` only when defaults are set (docs/url-groups.md). */
export function topicRecord(t: TopicRow): Topic {
  const out: Topic = {
    name: t.name,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    endpoints: t.endpoints.map((e) => (e.name !== undefined ? { name: e.name, url: e.url } : { url: e.url })),
  };
  if (t.headers && Object.keys(t.headers).length > 0) out.headers = t.headers;
  return out;
}

/** Every key is always present, zeros included: the Python SDK requires all of them (docs/queues.md). */
export function queueRecord(q: QueueRow): Queue {
  return {
    name: q.name,
    createdAt: q.createdAt,
    updatedAt: q.updatedAt,
    parallelism: q.parallelism,
    lag: q.lag,
    paused: q.paused,
  };
}
