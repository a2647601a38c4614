import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { indexName } from "../../search/documents.js";
import type { Services } from "../../services/context.js";
import { searchDataPlane } from "../../services/search-data.js";
import { rawBody, jsonBody } from "../body.js";
import {
  parseDeleteBody,
  parseFetchBody,
  parseRangeBody,
  parseSearchBody,
  parseUpsertBody,
} from "../bodies/search-data.js";
import { searchIndexAuth } from "../plugins/auth.js";
import { registerErrorHandling } from "../plugins/errors.js";

/**
 * The document-search API under each search index's endpoint, `/search/<slug>/<route>/<index name>`
 * (docs/search.md; the wire contract the official @upstash/search client speaks). Its own scope: the index's
 * `token` may call every route, its `read_only_token` only reads (src/http/plugins/auth.ts); answers are
 * `{"result": …}` and errors `{"error": …, "status": N}` (the common error handler with the search clients' body).
 */

type Params = { slug: string; name?: string };

export function searchDataRoutes(app: FastifyInstance, services: Services): void {
  const plane = searchDataPlane(services);
  app.addHook("onClose", async () => plane.flushUsage());
  registerErrorHandling(app, (message, status) => ({ error: message, status }));

  const { reads, writes } = searchIndexAuth(app, services, (request) =>
    plane.takeBandwidth(request.searchIndex, rawBody(request).length),
  );
  app.addHook("onSend", async (request, _reply, payload) => {
    if (request.searchIndex && typeof payload === "string") {
      plane.addBandwidth(request.searchIndex, Buffer.byteLength(payload));
    }
    return payload;
  });
  const ns = (request: FastifyRequest<{ Params: Params }>) => indexName(request.params.name);
  const ok = (reply: FastifyReply, result: unknown) => reply.send({ result });

  type R = FastifyRequest<{ Params: Params }>;
  const both = (path: string, opts: typeof reads, handler: (request: R, reply: FastifyReply) => Promise<unknown>) => {
    app.post<{ Params: Params }>(path, opts, handler);
    app.post<{ Params: Params }>(`${path}/:name`, opts, handler);
  };

  both("/:slug/upsert-data", writes, async (request, reply) =>
    ok(reply, await plane.upsert(request.searchIndex, ns(request), parseUpsertBody(jsonBody(request)))),
  );
  both("/:slug/search", reads, async (request, reply) =>
    ok(reply, await plane.search(request.searchIndex, ns(request), parseSearchBody(jsonBody(request)))),
  );
  both("/:slug/fetch", reads, async (request, reply) =>
    ok(reply, await plane.fetch(request.searchIndex, ns(request), parseFetchBody(jsonBody(request)))),
  );
  both("/:slug/delete", writes, async (request, reply) =>
    ok(reply, await plane.delete(request.searchIndex, ns(request), parseDeleteBody(jsonBody(request)))),
  );
  both("/:slug/range", reads, async (request, reply) =>
    ok(reply, await plane.range(request.searchIndex, ns(request), parseRangeBody(jsonBody(request)))),
  );

  const reset = async (request: R, reply: FastifyReply) => {
    // `/reset?all` (the vector API's verb for every name) clears the whole endpoint.
    const all = request.params.name === undefined && Object.hasOwn(request.query as object, "all");
    return ok(reply, await plane.reset(request.searchIndex, all ? undefined : ns(request)));
  };
  for (const method of ["POST", "DELETE"] as const) {
    app.route<{ Params: Params }>({ method, url: "/:slug/reset", ...writes, handler: reset });
    app.route<{ Params: Params }>({ method, url: "/:slug/reset/:name", ...writes, handler: reset });
    app.route<{ Params: Params }>({
      method,
      url: "/:slug/delete-namespace/:name",
      ...writes,
      handler: async (request, reply) => ok(reply, await plane.reset(request.searchIndex, ns(request))),
    });
  }
  for (const method of ["POST", "GET"] as const) {
    app.route<{ Params: Params }>({
      method,
      url: "/:slug/list-namespaces",
      ...reads,
      handler: async (request, reply) => ok(reply, await plane.listNamespaces(request.searchIndex)),
    });
    app.route<{ Params: Params }>({
      method,
      url: "/:slug/info",
      ...reads,
      handler: async (request, reply) => ok(reply, await plane.info(request.searchIndex)),
    });
  }
}
