import type { Dialect } from "../../domain/dialect.js";
import { Liveness, NotReady, Ready } from "../schemas/operations.js";
import { Type } from "../schemas/common.js";
import { ManagementAccount as account, Ok, UsageStats as stats } from "../schemas/management.js";
import { SearchIndexRecord as searchIndex, SearchIndexStats } from "../schemas/search.js";
import type { JsonSchema, RouteDoc } from "./route-doc.js";

const obj = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: "object", properties });
const str = (): JsonSchema => ({ type: "string" });
const ok: [string, typeof Ok] = ['The JSON string "OK"', Ok];
const basic = (p: Omit<RouteDoc, "auth">): RouteDoc => ({ ...p, auth: "basic" });

/** Management API routes (HTTP Basic e-mail:api_key), under the running dialect's segment. */
export function managementDocs(d: Dialect): Record<string, RouteDoc> {
  const base = `/v2/${d.managementSegment}`;
  const id = { id: "Messaging account id" };
  const tag = "Management: accounts";
  return {
    [`GET ${base}/user`]: basic({ tag, summary: "The caller's default messaging account", responses: { 200: ["Account", account] } }),
    [`GET ${base}/users`]: basic({ tag, summary: "The caller's messaging accounts", responses: { 200: ["Accounts", Type.Array(account)] } }),
    [`GET ${base}/user/:id`]: basic({ tag, summary: "One messaging account", params: id, responses: { 200: ["Account", account] } }),
    [`POST ${base}/rotate-token/:id`]: basic({ tag, summary: "Rotate an account's token", params: id, responses: { 200: ["Account", account] } }),
    [`POST ${base}/user/rotatetoken`]: basic({ tag, summary: "Rotate the default account's token", responses: { 200: ["Account", account] } }),
    [`POST ${base}/set-plan/:id`]: basic({
      tag,
      summary: "Change an account's plan",
      params: id,
      body: obj({ plan_name: str() }),
      responses: { 200: ok },
    }),
    [`PATCH ${base}/update-budget/:id`]: basic({
      tag,
      summary: "Set an account's monthly budget (0: none)",
      params: id,
      body: obj({ budget: { type: "number" } }),
      responses: { 200: ok },
    }),
    [`POST ${base}/enable-prodpack/:id`]: basic({ tag, summary: "Enable the prod pack", params: id, responses: { 200: ok } }),
    [`POST ${base}/disable-prodpack/:id`]: basic({ tag, summary: "Disable the prod pack", params: id, responses: { 200: ok } }),
    [`GET ${base}/stats`]: basic({
      tag: "Management: usage",
      summary: "Usage statistics of the default account",
      query: { period: "1h, 3h, 12h, 1d, 3d, 7d or 30d" },
      responses: { 200: ["Statistics", stats] },
    }),
    [`GET ${base}/stats/:id`]: basic({
      tag: "Management: usage",
      summary: "Usage statistics of an account",
      params: id,
      query: { period: "1h, 3h, 12h, 1d, 3d, 7d or 30d" },
      responses: { 200: ["Statistics", stats] },
    }),
    "POST /v2/search": basic({
      tag: "Management: search indexes",
      summary: "Create a search index",
      body: obj({ name: str(), region: str(), type: str() }),
      responses: { 200: ["Index", searchIndex] },
    }),
    "GET /v2/search": basic({
      tag: "Management: search indexes",
      summary: "List search indexes",
      responses: { 200: ["Indexes", Type.Array(searchIndex)] },
    }),
    "GET /v2/search/:id": basic({
      tag: "Management: search indexes",
      summary: "One search index",
      params: { id: "Index id" },
      responses: { 200: ["Index", searchIndex] },
    }),
    "GET /v2/search/:id/stats": basic({
      tag: "Management: search indexes",
      summary: "Usage statistics of a search index",
      params: { id: "Index id" },
      query: { period: "1h, 3h, 12h, 1d, 3d, 7d or 30d" },
      responses: { 200: ["Statistics", SearchIndexStats] },
    }),
    "DELETE /v2/search/:id": basic({
      tag: "Management: search indexes",
      summary: "Delete a search index",
      params: { id: "Index id" },
      responses: { 200: ok },
    }),
    "POST /v2/search/:id/rename": basic({
      tag: "Management: search indexes",
      summary: "Rename a search index",
      params: { id: "Index id" },
      body: obj({ name: str() }),
      responses: { 200: ok },
    }),
    "POST /v2/search/:id/reset-password": basic({
      tag: "Management: search indexes",
      summary: "New token for a search index",
      params: { id: "Index id" },
      responses: { 200: ok },
    }),
  };
}

/** Operability routes: no API credentials (docs/operations.md, docs/metrics.md). */
export const operationsDocs: Record<string, RouteDoc> = {
  "GET /health": {
    auth: "none",
    tag: "Operations",
    summary: "Liveness: 200 whenever the process answers HTTP",
    responses: { 200: ["Alive", Liveness] },
  },
  "GET /ready": {
    auth: "none",
    tag: "Operations",
    summary: "Readiness: store answers, migrations applied, not draining",
    responses: {
      200: ["Ready", Ready],
      503: ["Not ready, with the reason", NotReady],
    },
  },
  "GET /metrics": {
    auth: "metrics",
    tag: "Operations",
    summary: "Prometheus metrics (text exposition format 0.0.4)",
    responses: { 200: ["Metrics", { type: "string" }] },
  },
  "GET /openapi.json": {
    auth: "none",
    tag: "Operations",
    summary: "This document (OpenAPI 3.1)",
    responses: { 200: ["The OpenAPI document", { type: "object" }] },
  },
};
