import { AccountOverview, UsageStats } from "../schemas/account.js";
import { ServerConfig } from "../schemas/operations.js";
import type { TSchema } from "../schemas/common.js";
import {
  SearchDeleted,
  SearchFetched,
  SearchHits,
  SearchInfo,
  SearchNamespaces,
  SearchRange,
  SearchSuccess,
} from "../schemas/search.js";
import type { JsonSchema, RouteDoc } from "./route-doc.js";

const obj = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: "object", properties });
const str = (): JsonSchema => ({ type: "string" });
const html: JsonSchema = { type: "string", description: "text/html" };

/** The console's support routes and the account overview it reads (README: /console). */
export const consoleDocs: Record<string, RouteDoc> = {
  "GET /v2/account": {
    auth: "token",
    tag: "Account",
    summary: "The token's account: plan, limits and usage overview (the console's front page)",
    responses: { 200: ["Overview", AccountOverview] },
  },
  "GET /v2/account/stats": {
    auth: "token",
    tag: "Account",
    summary: "Usage statistics of the token's account",
    query: { period: "1h, 3h, 12h, 1d, 3d, 7d or 30d (default 1h)" },
    responses: { 200: ["Statistics", UsageStats] },
  },
  "GET /console/config.json": {
    auth: "none",
    tag: "Console",
    summary: "The names this server speaks (dialect, header prefix, token query key), for the console page",
    responses: { 200: ["Configuration", ServerConfig] },
  },
  "GET /": {
    auth: "none",
    tag: "Console",
    summary: "A browser is redirected to /console/; anything else gets 404",
    responses: { 302: ["To the console"], 404: ["Not a browser", obj({ error: str() })] },
  },
  "GET /console": {
    auth: "none",
    tag: "Console",
    summary: "The console page (503 when its assets were not built)",
    responses: { 200: ["The page", html], 503: ["Console not built: run npm run build:console", obj({ error: str() })] },
  },
  "GET /console/*": {
    auth: "none",
    tag: "Console",
    summary: "The console's static assets",
    params: { "*": "Asset path" },
    responses: { 200: ["The asset", { type: "string" }], 404: ["No such asset", obj({ error: str() })] },
  },
};

const slug = { slug: "The index's endpoint slug" };
const named = { ...slug, name: "Namespace" };
const success: [string, TSchema] = ['"Success"', SearchSuccess];

/** The search data plane (src/http/routes/search-data.ts), each verb on the default namespace or a named one. */
export function searchDataDocs(): Record<string, RouteDoc> {
  const docs: Record<string, RouteDoc> = {};
  const add = (method: string, path: string, summary: string, answer: [string, TSchema], body?: JsonSchema) => {
    for (const [suffix, params] of [["", slug], ["/:name", named]] as const) {
      docs[`${method} /search/:slug/${path}${suffix}`] = {
        auth: "index",
        tag: "Search data",
        summary: suffix === "" ? summary : `${summary} (named namespace)`,
        params,
        ...(body ? { body } : {}),
        responses: { 200: answer },
      };
    }
  };
  add("POST", "upsert-data", "Upsert documents", success, { type: "array", items: { type: "object" } });
  add(
    "POST",
    "search",
    "Search",
    ["The hits, best first", SearchHits],
    obj({ query: str(), topK: { type: "integer" }, filter: str() }),
  );
  add("POST", "fetch", "Fetch documents by id", ["Documents, null for a missing id", SearchFetched], { type: "object" });
  add("POST", "delete", "Delete documents by id", ["How many were deleted", SearchDeleted], { type: "object" });
  add(
    "POST",
    "range",
    "Page through documents",
    ["A page of documents", SearchRange],
    obj({ cursor: str(), limit: { type: "integer" } }),
  );
  add("POST", "reset", "Delete every document of the namespace (?all: every namespace)", success);
  add("DELETE", "reset", "Delete every document of the namespace (?all: every namespace)", success);
  for (const method of ["POST", "DELETE"]) {
    docs[`${method} /search/:slug/delete-namespace/:name`] = {
      auth: "index",
      tag: "Search data",
      summary: "Delete a namespace",
      params: named,
      responses: { 200: success },
    };
  }
  for (const method of ["POST", "GET"]) {
    docs[`${method} /search/:slug/list-namespaces`] = {
      auth: "index",
      tag: "Search data",
      summary: "List namespaces",
      params: slug,
      responses: { 200: ["The index names", SearchNamespaces] },
    };
    docs[`${method} /search/:slug/info`] = {
      auth: "index",
      tag: "Search data",
      summary: "Index information (document count, namespaces)",
      params: slug,
      responses: { 200: ["Counts and size", SearchInfo] },
    };
  }
  return docs;
}
