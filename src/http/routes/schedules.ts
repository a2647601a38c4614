import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Services } from "../../services/context.js";
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  triggerSchedule,
} from "../../services/schedules.js";
import { rawBody } from "../body.js";
import { restAfter, splitDestination } from "../destination.js";
import type { ScheduleCreated, ScheduleTriggered } from "../schemas/schedules.js";
import { scheduleRecord } from "../views/schedule-view.js";
import { readable } from "../plugins/auth.js";

type IdParams = { Params: { id: string } };

/**
 * Schedules (docs/schedules.md). Routing keeps `POST /v2/schedules/{id}/pause|resume` apart from a create whose
 * destination ends that way: an action path is exactly two segments (`{id}/pause`), while a create's destination
 * is a full http(s) URL (`https://host/...`: more segments, and `https:` followed by an empty one) or a URL-group
 * name (one segment). The parametric action routes win over the wildcard only on an exact two-segment match.
 */
export function scheduleRoutes(app: FastifyInstance, services: Services): void {
  const create = async (request: FastifyRequest): Promise<ScheduleCreated> => {
    const { destination, config } = splitDestination(restAfter(request, /^\/v2\/schedules\//i), request.dialect);
    const scheduleId = await createSchedule(services, {
      account: request.account,
      destination,
      source: { headers: request.headers, query: config },
      dialect: request.dialect,
      body: rawBody(request),
      callerIp: request.ip,
    });
    return { scheduleId };
  };
  app.post("/v2/schedules/*", create);
  // Without a destination: a 400 naming it rather than a bare route 404.
  app.post("/v2/schedules", create);

  app.get("/v2/schedules", readable, async (request) =>
    (await listSchedules(services, request.account)).map(scheduleRecord),
  );

  app.get<IdParams>("/v2/schedules/:id", readable, async (request) =>
    scheduleRecord(await getSchedule(services, request.account, request.params.id)),
  );

  // 200 with an empty body: the SDKs do not parse it (docs/messaging.md "SDK compatibility").
  app.delete<IdParams>("/v2/schedules/:id", async (request, reply) => {
    await deleteSchedule(services, request.account, request.params.id);
    return reply.status(200).send();
  });

  // Run now (a Ferry extension, docs/schedules.md "Run now"): the messages of one tick, published at once.
  app.post<IdParams>("/v2/schedules/:id/trigger", async (request): Promise<ScheduleTriggered> => ({
    messages: await triggerSchedule(services, request.account, request.params.id),
  }));

  // All three SDKs use PATCH; the docs and OpenAPI say POST: both are accepted (docs/schedules.md).
  for (const method of ["POST", "PATCH"] as const) {
    app.route<IdParams>({
      method,
      url: "/v2/schedules/:id/pause",
      handler: async (request, reply) => {
        await pauseSchedule(services, request.account, request.params.id);
        return reply.status(200).send();
      },
    });
    app.route<IdParams>({
      method,
      url: "/v2/schedules/:id/resume",
      handler: async (request, reply) => {
        await resumeSchedule(services, request.account, request.params.id);
        return reply.status(200).send();
      },
    });
  }
}
