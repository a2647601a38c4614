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
import { workflowDocs } from "./workflow-docs.js";
import { HOOK_METHODS } from "../routes/workflows.js";

/** Routes every app registered, `METHOD url`, HEAD excluded: what the OpenAPI document must cover (test). */
const registered = new WeakMap<FastifyInstance, string[]>();

export function registeredRoutes(app: FastifyInstance): string[] {
  return registered.get(app) ?? [];
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
    route.schema = validated(full);
    // Bodies, headers and responses are documented only: Fastify neither validates nor serializes with them.
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
