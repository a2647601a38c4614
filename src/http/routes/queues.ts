import type { FastifyInstance } from "fastify";
import { invalidField } from "../../errors.js";
import type { Services } from "../../services/context.js";
import {
  deleteQueue,
  enqueue,
  getQueue,
  listQueues,
  queueName,
  setQueuePaused,
  upsertQueue,
} from "../../services/queues.js";
import { jsonBody, rawBody } from "../body.js";
import { parseQueueUpsert } from "../bodies/queues.js";
import { restAfter, splitDestination } from "../destination.js";
import { queueRecord } from "../views/group-queue-views.js";
import { sendPublished } from "../replies.js";
import { readable } from "../plugins/auth.js";

type Named = { Params: { name: string } };

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Queues (docs/queues.md): enqueue, upsert, list, get (with `lag`), delete, pause and resume. */
export function queueRoutes(app: FastifyInstance, services: Services): void {
  // The destination follows the queue name raw, like publish's: `/v2/enqueue/{queue}/{destination}`.
  app.post("/v2/enqueue/*", async (request, reply) => {
    const rest = restAfter(request, /^\/v2\/enqueue\//i);
    const slash = rest.indexOf("/");
    const question = rest.indexOf("?");
    if (slash < 0 || (question >= 0 && question < slash)) throw invalidField("destination", "is required");
    const name = queueName(decodeSegment(rest.slice(0, slash)));
    const { destination, config } = splitDestination(rest.slice(slash + 1), request.dialect);
    if (destination === "") throw invalidField("destination", "is required");
    const results = await enqueue(services, {
      account: request.account,
      destination,
      source: { headers: request.headers, query: config },
      dialect: request.dialect,
      body: rawBody(request),
      callerIp: request.ip,
      queueName: name,
    });
    return sendPublished(reply, destination, results);
  });

  app.post("/v2/queues", async (request, reply) => {
    await upsertQueue(services, request.account, parseQueueUpsert(jsonBody(request)));
    return reply.send();
  });

  app.get("/v2/queues", readable, async (request) => (await listQueues(services, request.account)).map(queueRecord));

  app.get<Named>("/v2/queues/:name", readable, async (request) =>
    queueRecord(await getQueue(services, request.account, request.params.name)),
  );

  app.delete<Named>("/v2/queues/:name", async (request, reply) => {
    await deleteQueue(services, request.account, request.params.name);
    return reply.send();
  });

  app.post<Named>("/v2/queues/:name/pause", async (request, reply) => {
    await setQueuePaused(services, request.account, request.params.name, true);
    return reply.send();
  });

  app.post<Named>("/v2/queues/:name/resume", async (request, reply) => {
    await setQueuePaused(services, request.account, request.params.name, false);
    return reply.send();
  });
}
