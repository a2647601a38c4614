import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Services } from "../../services/context.js";
import {
  createSearchIndex,
  deleteSearchIndex,
  getSearchIndex,
  listSearchIndexes,
  renameSearchIndex,
  resetSearchIndexPassword,
  searchIndexStats,
  searchIndexThroughput,
} from "../../services/search.js";
import type { SearchIndex } from "../../domain/search.js";
import { jsonObjectBody } from "../body.js";
import { periodParam, type Query } from "../query.js";
import { parseSearchIndexCreate, parseSearchIndexRename } from "../bodies/search-indexes.js";
import { searchIndexRecord } from "../views/search-view.js";
import type { SearchIndexRecord, SearchIndexStats } from "../schemas/search.js";
import { sendOk } from "../replies.js";

type Id = { Params: { id: string } };

/** Where this server was reached: the base of generated index endpoints. */
const originOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

/** Search indexes (docs/management.md "Search indexes"). */
export function searchRoutes(app: FastifyInstance, services: Services): void {
  // The partner e-mail field is named in the request's dialect (docs/messaging.md "Dialects").
  const view = async (request: FastifyRequest, index: SearchIndex): Promise<SearchIndexRecord> =>
    searchIndexRecord(index, request.dialect, await searchIndexThroughput(services, index));

  app.post("/v2/search", async (request) => {
    const index = parseSearchIndexCreate(jsonObjectBody(request) ?? {});
    return view(request, await createSearchIndex(services, request.customer, index, originOf(request)));
  });
  app.get("/v2/search", async (request) =>
    Promise.all((await listSearchIndexes(services, request.customer)).map((index) => view(request, index))),
  );
  app.get<Id>("/v2/search/:id", async (request) =>
    view(request, await getSearchIndex(services, request.customer, request.params.id)),
  );
  app.get<Id>("/v2/search/:id/stats", async (request): Promise<SearchIndexStats> => {
    const period = periodParam(request.query as Query);
    return searchIndexStats(services, await getSearchIndex(services, request.customer, request.params.id), period);
  });
  app.delete<Id>("/v2/search/:id", async (request, reply) => {
    await deleteSearchIndex(services, request.customer, request.params.id);
    return sendOk(reply);
  });
  app.post<Id>("/v2/search/:id/rename", async (request, reply) => {
    const name = parseSearchIndexRename(jsonObjectBody(request) ?? {});
    await renameSearchIndex(services, request.customer, request.params.id, name);
    return sendOk(reply);
  });
  app.post<Id>("/v2/search/:id/reset-password", async (request, reply) => {
    await resetSearchIndexPassword(services, request.customer, request.params.id);
    return sendOk(reply);
  });
}
