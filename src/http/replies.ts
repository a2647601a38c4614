import type { FastifyReply } from "fastify";
import type { PublishedMessage } from "../services/publish.js";
import type { PublishAnswer } from "./schemas/publish.js";
import { publishedView } from "./views/published-view.js";

/**
 * Answers several routes give alike, in one place so that no route imports another (test/unit/import-cycles.test.ts).
 */

/** Action endpoints of the management API answer the JSON string "OK" (docs/management.md). */
export function sendOk(reply: FastifyReply) {
  return reply.type("application/json; charset=utf-8").send(JSON.stringify("OK"));
}

/** A publish or enqueue: 202 when every message was a duplicate of an earlier one, else 200 (docs/messaging.md). */
export function sendPublished(
  reply: FastifyReply,
  destination: string,
  results: PublishedMessage[],
): PublishAnswer {
  const allDuplicates = results.length > 0 && results.every((r) => r.deduplicated);
  reply.status(allDuplicates ? 202 : 200);
  return publishedView(destination, results);
}
