import { timingSafeEqual } from "node:crypto";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { SearchIndex } from "../../domain/search.js";
import { AppError, errorCatalog, invalidField, isStorageFull, storageFull } from "../../errors.js";
import { indexName } from "../../search/documents.js";
import { builtinEmbedder, type Embedder } from "../../search/embedder.js";
import { openAiEmbedder } from "../../search/openai-embedder.js";
import type { Services } from "../../services/context.js";
import { type SearchDataPlane, searchDataPlane } from "../../services/search-data.js";
import { jsonBody, rawBody } from "../body.js";

/**
 * The document-search API under each search index's endpoint, `/search/<slug>/<route>/<index name>`
 * (docs/search.md; the wire contract the official @upstash/search client speaks). Its own scope: the index's
 * `token` may call every route, its `read_only_token` only reads; answers are `{"result": …}` and errors
 * `{"error": …, "status": N}`.
 */

declare module "fastify" {
  interface FastifyRequest {
    /** The search index of the endpoint, once its token was checked. */
    searchIndex: SearchIndex;
  }
}

type Params = { slug: string; name?: string };

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function bearer(request: FastifyRequest): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization?.trim() ?? "");
  return match?.[1]?.trim();
}

export function embedderFor(services: Services): Embedder {
  const { embeddingsUrl, embeddingsModel, embeddingsApiKey } = services.config;
  if (!embeddingsUrl) return builtinEmbedder;
  return openAiEmbedder({
    url: embeddingsUrl,
    model: embeddingsModel,
    ...(embeddingsApiKey ? { apiKey: embeddingsApiKey } : {}),
  });
}

const objectBody = (request: FastifyRequest): Record<string, unknown> => {
  const body = jsonBody(request);
  if (body === undefined || body === null || (Array.isArray(body) && body.length === 0)) return {};
  if (typeof body !== "object" || Array.isArray(body)) throw invalidField("body", "must be a JSON object");
  return body as Record<string, unknown>;
};

export function searchDataRoutes(app: FastifyInstance, services: Services): void {
  const plane: SearchDataPlane = searchDataPlane(services, embedderFor(services));
  app.addHook("onClose", async () => plane.flushUsage());

  // The same contract as src/http/plugins/errors.ts, plus the `status` key the search clients read.
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const known = error instanceof AppError ? error : isStorageFull(error) ? storageFull() : undefined;
    if (known) {
      for (const [name, value] of Object.entries(known.headers)) reply.header(name, value);
      return reply.status(known.status).send({ error: known.message, status: known.status });
    }
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      const answered = Object.values(errorCatalog).includes(status as never) ? status : errorCatalog.invalid_input;
      return reply.status(answered).send({ error: error.message, status: answered });
    }
    if ((error as { unavailable?: boolean }).unavailable) {
      const unavailable = errorCatalog.unavailable;
      return reply.status(unavailable).send({ error: "storage unavailable, retry shortly", status: unavailable });
    }
    request.log.error({ err: error }, "unhandled error");
    return reply.status(errorCatalog.internal).send({ error: "internal error", status: errorCatalog.internal });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ error: `route ${request.method} ${request.url.split("?")[0]} not found`, status: 404 }),
  );

  app.decorateRequest("searchIndex", undefined as unknown as SearchIndex);
  const authorize = (writes: boolean) => async (request: FastifyRequest<{ Params: Params }>) => {
    await authenticate(request, writes);
    await plane.takeBandwidth(request.searchIndex, rawBody(request).length);
  };
  app.addHook("onSend", async (request, _reply, payload) => {
    if (request.searchIndex && typeof payload === "string") {
      plane.addBandwidth(request.searchIndex, Buffer.byteLength(payload));
    }
    return payload;
  });
  const authenticate = async (request: FastifyRequest<{ Params: Params }>, writes: boolean) => {
    const indexes = await services.store.searchIndexListBySlug({ slug: request.params.slug });
    if (indexes.length === 0) throw new AppError("not_found", `search index ${request.params.slug} not found`);
    const token = bearer(request);
    if (token === undefined) throw new AppError("unauthorized", "missing Authorization: Bearer <token>");
    for (const index of indexes) {
      if (sameSecret(token, index.token)) {
        request.searchIndex = index;
        return;
      }
      if (sameSecret(token, index.readOnlyToken)) {
        if (writes) throw new AppError("forbidden", "the read-only token cannot write; use the index's token");
        request.searchIndex = index;
        return;
      }
    }
    throw new AppError("unauthorized", "invalid token for this search index");
  };
  const reads = { preHandler: authorize(false) };
  const writes = { preHandler: authorize(true) };
  const ns = (request: FastifyRequest<{ Params: Params }>) => indexName(request.params.name);
  const ok = (reply: FastifyReply, result: unknown) => reply.send({ result });

  type R = FastifyRequest<{ Params: Params }>;
  const both = (path: string, opts: typeof reads, handler: (request: R, reply: FastifyReply) => Promise<unknown>) => {
    app.post<{ Params: Params }>(path, opts, handler);
    app.post<{ Params: Params }>(`${path}/:name`, opts, handler);
  };

  both("/:slug/upsert-data", writes, async (request, reply) =>
    ok(reply, await plane.upsert(request.searchIndex, ns(request), jsonBody(request))),
  );
  both("/:slug/search", reads, async (request, reply) =>
    ok(reply, await plane.search(request.searchIndex, ns(request), objectBody(request))),
  );
  both("/:slug/fetch", reads, async (request, reply) =>
    ok(reply, await plane.fetch(request.searchIndex, ns(request), jsonBody(request))),
  );
  both("/:slug/delete", writes, async (request, reply) =>
    ok(reply, await plane.delete(request.searchIndex, ns(request), jsonBody(request))),
  );
  both("/:slug/range", reads, async (request, reply) =>
    ok(reply, await plane.range(request.searchIndex, ns(request), objectBody(request))),
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
