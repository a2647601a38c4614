import { parseBool } from "../../domain/publish-config.js";
import { invalidField, quoted } from "../../errors.js";
import { queueName, type QueueSettings } from "../../services/queues.js";

function parallelismOf(value: unknown): number {
  if (value === undefined || value === null) return 1;
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 1) {
    throw invalidField("parallelism", `${quoted(value)} must be an integer of at least 1`);
  }
  return n;
}

function pausedOf(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === "boolean") return value;
  if (typeof value === "string") return parseBool(value, "paused");
  throw invalidField("paused", "must be true or false");
}

/** `{queueName, parallelism (default 1), paused (default false)}` of the queue upsert (docs/queues.md). */
export function parseQueueUpsert(body: unknown): QueueSettings {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidField("body", 'must be a JSON object {"queueName", "parallelism", "paused"}');
  }
  const b = body as Record<string, unknown>;
  const name = queueName(b.queueName);
  return { name, parallelism: parallelismOf(b.parallelism), paused: pausedOf(b.paused) };
}
