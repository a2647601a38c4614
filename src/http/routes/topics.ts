import type { FastifyInstance } from "fastify";
import type { Services } from "../../services/context.js";
import {
  addEndpoints,
  deleteTopic,
  getTopic,
  listTopics,
  removeEndpoints,
  setDefaultHeaders,
} from "../../services/topics.js";
import { jsonBody } from "../body.js";
import { topicRecord } from "../views/group-queue-views.js";
import { readable } from "../plugins/auth.js";

type Named = { Params: { name: string } };

/** URL groups, path word `topics` (reference §1.7). Changes answer 200 with an empty body. */
export function topicRoutes(app: FastifyInstance, services: Services): void {
  app.post<Named>("/v2/topics/:name/endpoints", async (request, reply) => {
    await addEndpoints(services, request.account, request.params.name, jsonBody(request));
    return reply.send();
  });

  app.delete<Named>("/v2/topics/:name/endpoints", async (request, reply) => {
    await removeEndpoints(services, request.account, request.params.name, jsonBody(request));
    return reply.send();
  });

  app.get("/v2/topics", readable, async (request) => (await listTopics(services, request.account)).map(topicRecord));

  app.get<Named>("/v2/topics/:name", readable, async (request) =>
    topicRecord(await getTopic(services, request.account, request.params.name)),
  );

  app.delete<Named>("/v2/topics/:name", async (request, reply) => {
    await deleteTopic(services, request.account, request.params.name);
    return reply.send();
  });

  app.patch<Named>("/v2/topics/:name", async (request, reply) => {
    await setDefaultHeaders(services, request.account, request.params.name, jsonBody(request));
    return reply.send();
  });
}
