import type { FastifyInstance } from "fastify";
import type { Services } from "../../services/context.js";
import { publish } from "../../services/publish.js";
import { rawBody } from "../body.js";
import { restAfter, splitDestination } from "../destination.js";
import { sendPublished } from "../replies.js";

export function publishRoutes(app: FastifyInstance, services: Services): void {
  app.post("/v2/publish/*", { config: { tokenCheckedAtCommit: true } }, async (request, reply) => {
    const { destination, config } = splitDestination(restAfter(request, /^\/v2\/publish\//i), request.dialect);
    const results = await publish(services, {
      account: request.account,
      destination,
      source: { headers: request.headers, query: config },
      dialect: request.dialect,
      body: rawBody(request),
      callerIp: request.ip,
      tokenCheck: request.tokenCheck,
    });
    return sendPublished(reply, destination, results);
  });
}
