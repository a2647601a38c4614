import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Services } from "../../services/context.js";
import { isUrlDestination, type PublishedMessage, publish } from "../../services/publish.js";
import { rawBody } from "../body.js";
import type { PublishAnswer, Published } from "../schemas/publish.js";
import { splitDestination } from "../destination.js";

/** The raw URL after a route prefix such as `/v2/publish/`, matched case-insensitively. */
export function restAfter(request: FastifyRequest, prefix: RegExp): string {
  const url = request.raw.url ?? "";
  const match = prefix.exec(url);
  return match ? url.slice(match[0].length) : "";
}

/**
 * A URL destination answers one object; a URL group a bare array, one element per endpoint (docs/messaging.md
 * "Publish").
 */
export function publishedView(destination: string, results: PublishedMessage[]): PublishAnswer {
  const view = (r: PublishedMessage): Published =>
    r.deduplicated
      ? { messageId: r.messageId, url: r.url, deduplicated: true }
      : { messageId: r.messageId, url: r.url };
  return isUrlDestination(destination) ? view(results[0]!) : results.map(view);
}

export function sendPublished(reply: FastifyReply, destination: string, results: PublishedMessage[]): PublishAnswer {
  const allDuplicates = results.length > 0 && results.every((r) => r.deduplicated);
  reply.status(allDuplicates ? 202 : 200);
  return publishedView(destination, results);
}

export function publishRoutes(app: FastifyInstance, services: Services): void {
  app.post("/v2/publish/*", async (request, reply) => {
    const { destination, config } = splitDestination(restAfter(request, /^\/v2\/publish\//i), request.dialect);
    const results = await publish(services, {
      account: request.account,
      destination,
      source: { headers: request.headers, query: config },
      dialect: request.dialect,
      body: rawBody(request),
      callerIp: request.ip,
    });
    return sendPublished(reply, destination, results);
  });
}
