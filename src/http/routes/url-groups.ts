import type { FastifyInstance } from "fastify";
import type { Services } from "../../services/context.js";
import {
  addEndpoints,
  deleteUrlGroup,
  getUrlGroup,
  listUrlGroups,
  removeEndpoints,
  setDefaultHeaders,
  topicName,
} from "../../services/url-groups.js";
import { jsonBody } from "../body.js";
import { parseDefaultHeaders, parseEndpointSelectors, parseEndpoints } from "../bodies/url-groups.js";
import { topicRecord } from "../views/group-queue-views.js";
import { readable } from "../plugins/auth.js";

type Named = { Params: { name: string } };

/** URL groups, path word `topics` (docs/url-groups.md). Changes answer 200 with an empty body. */
export function urlGroupRoutes(app: FastifyInstance, services: Services): void {
  app.post<Named>("/v2/topics/:name/endpoints", async (request, reply) => {
    const name = topicName(request.params.name);
    await addEndpoints(services, request.account, name, parseEndpoints(jsonBody(request)));
    return reply.send();
  });

  app.delete<Named>("/v2/topics/:name/endpoints", async (request, reply) => {
    const name = topicName(request.params.name);
    await removeEndpoints(services, request.account, name, parseEndpointSelectors(jsonBody(request)));
    return reply.send();
  });

  app.get("/v2/topics", readable, async (request) => (await listUrlGroups(services, request.account)).map(topicRecord));

  app.get<Named>("/v2/topics/:name", readable, async (request) =>
    topicRecord(await getUrlGroup(services, request.account, request.params.name)),
  );

  app.delete<Named>("/v2/topics/:name", async (request, reply) => {
    await deleteUrlGroup(services, request.account, request.params.name);
    return reply.send();
  });

  app.patch<Named>("/v2/topics/:name", async (request, reply) => {
    const name = topicName(request.params.name);
    await setDefaultHeaders(services, request.account, name, parseDefaultHeaders(jsonBody(request)));
    return reply.send();
  });
}
