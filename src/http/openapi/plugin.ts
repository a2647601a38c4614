import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance, RouteOptions } from "fastify";
import type { Services } from "../../services/context.js";
import { consoleDocs, searchDataDocs } from "./console-search-docs.js";
import { healthDocs } from "./health-docs.js";
import { managementDocs, operationsDocs } from "./management-docs.js";
import { messagingDocs } from "./messaging-docs.js";
import { messageActionDocs } from "./message-action-docs.js";
import { type JsonSchema, type RouteDoc, routeSchema } from "./route-doc.js";
import { isWireShape } from "../schemas/common.js";
import { workflowDocs } from "./workflow-docs.js";
import { HOOK_METHODS } from "../routes/workflows.js";

/** Routes every app registered, `METHOD url`, HEAD excluded: what the OpenAPI document must cover (test). */
const registered = new WeakMap<FastifyInstance, string[]>();

export function registeredRoutes(app: FastifyInstance): string[] {
  return registered.get(app) ?? [];
}

/**
 * How a route's 2xx answers are written: `typed` (every 2xx is a wire shape or declared bodiless, and Fastify
 * serializes through it), `loose` (described for the documentation only) or `undocumented`. Read by the test that
 * fails on a route without a schema (test/e2e/route-schemas.test.ts).
 */
export type ResponseWriting = "typed" | "loose" | "undocumented";
const writing = new WeakMap<FastifyInstance, Map<string, ResponseWriting>>();

export function responseWriting(app: FastifyInstance): Map<string, ResponseWriting> {
  return writing.get(app) ?? new Map();
}

/**
 * The 2xx answers Fastify serializes, when every 2xx of the declaration is typed: a wire shape serializes its body,
 * a declared empty answer is `null`, so a handler that sends a body the declaration does not have answers `null`
 * and its tests fail. Strings and buffers a handler sends are never serialized (Fastify sends them as they are).
 */
function serializedResponses(doc: RouteDoc): JsonSchema | undefined {
  const ok = Object.entries(doc.responses).filter(([status]) => Number(status) >= 200 && Number(status) < 300);
  if (ok.length === 0 || !ok.every(([, [, body]]) => body === undefined || isWireShape(body))) return undefined;
  return Object.fromEntries(ok.map(([status, [, body]]) => [status, body ?? { type: "null" }]));
}

/** The part of a route schema Fastify validates with: path parameters and the query string (route-doc.ts says why). */
function validated(full: JsonSchema): JsonSchema {
  const { params, querystring } = full;
  return { ...(params ? { params } : {}), ...(querystring ? { querystring } : {}) };
}

/**
 * OpenAPI 3.1 from the routes (docs/openapi.md): every route gets its declaration (openapi/*-docs.ts, in the
 * default dialect's names; the management routes under both dialects' segments) when it is registered; Fastify
 * validates path parameters and query strings with it, and @fastify/swagger publishes all of it at
 * `GET /openapi.json`, with Swagger UI at `/docs` from the package's own assets. Call before any route is
 * registered. A route without a declaration still appears, marked undocumented.
 */
export function registerOpenApi(app: FastifyInstance, services: Services): void {
  const d = services.dialects.default;
  const other = services.dialects.all.find((x) => x !== d)!;
  const docs: Record<string, RouteDoc> = {
    ...operationsDocs,
    ...messagingDocs(d),
    ...messageActionDocs(d),
    ...Object.assign({}, ...services.dialects.all.map(managementDocs)),
    ...consoleDocs,
    ...healthDocs,
    ...searchDataDocs(),
    ...workflowDocs(d, HOOK_METHODS),
  };
  const routes: string[] = [];
  registered.set(app, routes);
  const writings = new Map<string, ResponseWriting>();
  writing.set(app, writings);

  app.addHook("onRoute", (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if ((route.schema as { hide?: boolean } | undefined)?.hide) return; // the documentation's own assets
    for (const method of methods) if (method !== "HEAD") routes.push(`${method} ${route.url}`);
    if (route.schema) return;
    const method = methods.find((m) => m !== "HEAD") ?? "GET";
    const doc = docs[`${method} ${route.url}`];
    const full = doc
      ? routeSchema(doc)
      : { summary: `${method} ${route.url}`, description: "Not documented yet.", tags: ["Undocumented"] };
    const response = doc ? serializedResponses(doc) : undefined;
    writings.set(`${method} ${route.url}`, response ? "typed" : doc ? "loose" : "undocumented");
    route.schema = { ...validated(full), ...(response ? { response } : {}) };
    // Bodies and headers are documented only (route-doc.ts says why); typed 2xx answers are also serialized.
    route.config = { ...route.config, swaggerTransform: ({ url }) => ({ schema: full, url }) };
  });

  app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Ferry",
        version: services.version,
        description:
          "Durable HTTP message delivery with the hosted service's wire format. Messaging API: Bearer token. " +
          `Management API (/v2/${d.managementSegment}/… or /v2/${other.managementSegment}/…, /v2/search): ` +
          `HTTP Basic e-mail:api_key. Names: ${d.prefix}… headers as documented here (default dialect: ` +
          `${d.name}); the ${other.prefix}… names, ${other.tokenQuery} and /v2/${other.managementSegment} are ` +
          "understood too, a request's own names pick its dialect.",
      },
      components: {
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            description: `Or the ${d.tokenQuery} (or ${other.tokenQuery}) query parameter`,
          },
          basic: { type: "http", scheme: "basic" },
        },
      },
    },
  });
  app.register(swaggerUi, { routePrefix: "/docs" });
  app.register(async (scope) => {
    scope.get("/openapi.json", async () => app.swagger());
  });
}
