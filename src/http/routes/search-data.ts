import type { FastifyInstance, FastifyRequest } from "fastify";
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
import type {
  SearchDeleted,
  SearchFetched,
  SearchHits,
  SearchInfo,
  SearchNamespaces,
  SearchRange,
  SearchSuccess,
} from "../schemas/search.js";

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

  type R = FastifyRequest<{ Params: Params }>;
  const both = (path: string, opts: typeof reads, handler: (request: R) => Promise<unknown>) => {
    app.post<{ Params: Params }>(path, opts, handler);
    app.post<{ Params: Params }>(`${path}/:name`, opts, handler);
  };

  // Each answer is typed by its wire shape (src/http/schemas/search.ts), through which Fastify writes it.
  both("/:slug/upsert-data", writes, async (request): Promise<SearchSuccess> => ({
    result: await plane.upsert(request.searchIndex, ns(request), parseUpsertBody(jsonBody(request))),
  }));
  both("/:slug/search", reads, async (request): Promise<SearchHits> => ({
    result: await plane.search(request.searchIndex, ns(request), parseSearchBody(jsonBody(request))),
  }));
  both("/:slug/fetch", reads, async (request): Promise<SearchFetched> => ({
    result: await plane.fetch(request.searchIndex, ns(request), parseFetchBody(jsonBody(request))),
  }));
  both("/:slug/delete", writes, async (request): Promise<SearchDeleted> => ({
    result: await plane.delete(request.searchIndex, ns(request), parseDeleteBody(jsonBody(request))),
  }));
  both("/:slug/range", reads, async (request): Promise<SearchRange> => ({
    result: await plane.range(request.searchIndex, ns(request), parseRangeBody(jsonBody(request))),
  }));

  const reset = async (request: R): Promise<SearchSuccess> => {
    // `/reset?all` (the vector API's verb for every name) clears the whole endpoint.
    const all = request.params.name === undefined && Object.hasOwn(request.query as object, "all");
    return { result: await plane.reset(request.searchIndex, all ? undefined : ns(request)) };
  };
  for (const method of ["POST", "DELETE"] as const) {
    app.route<{ Params: Params }>({ method, url: "/:slug/reset", ...writes, handler: reset });
    app.route<{ Params: Params }>({ method, url: "/:slug/reset/:name", ...writes, handler: reset });
    app.route<{ Params: Params }>({
      method,
      url: "/:slug/delete-namespace/:name",
      ...writes,
      handler: async (request): Promise<SearchSuccess> => ({
        result: await plane.reset(request.searchIndex, ns(request)),
      }),
    });
  }
  for (const method of ["POST", "GET"] as const) {
    app.route<{ Params: Params }>({
      method,
      url: "/:slug/list-namespaces",
      ...reads,
      handler: async (request): Promise<SearchNamespaces> => ({
        result: await plane.listNamespaces(request.searchIndex),
      }),
    });
    app.route<{ Params: Params }>({
      method,
      url: "/:slug/info",
      ...reads,
      handler: async (request): Promise<SearchInfo> => ({ result: await plane.info(request.searchIndex) }),
    });
  }
}
