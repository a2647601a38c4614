/**
 * How a route describes itself (docs/openapi.md): a compact declaration turned into the Fastify route schema that
 * validates the request and that @fastify/swagger publishes as OpenAPI 3.1.
 *
 * Validation is deliberately additive (the compatibility suites must stay green): path parameters and query strings
 * are checked for their shape only (strings, repeated keys allowed, unknown keys left to the handlers, which refuse
 * them naming the key); bodies and headers are described, not validated, because every body reaches the handlers as
 * the raw bytes (a publish forwards them unchanged) and the handlers' own parsing answers with better messages.
 */

import type { TSchema } from "typebox";

/** A JSON Schema fragment (draft 2020-12 as OpenAPI 3.1 uses it). */
export type JsonSchema = Record<string, unknown>;

/** token: messaging token; basic: management e-mail:api_key; index: a search index's own token. */
export type Auth = "token" | "basic" | "index" | "none" | "metrics";

export interface RouteDoc {
  summary: string;
  tag: string;
  description?: string;
  auth: Auth;
  /** Path parameter → description. */
  params?: Record<string, string>;
  /** Query key → description; each may be repeated or comma-separated where the handler says so. */
  query?: Record<string, string>;
  /** Headers of note (lower-case name) → description. */
  headers?: Record<string, string>;
  /** Request body: a JSON Schema, or "raw" for bytes forwarded as they are. */
  body?: JsonSchema | "raw";
  /**
   * Status → [description, schema of the body (omitted: no body)]. A 2xx body given as a wire shape
   * (src/http/schemas/) is also how the answer is serialized; error answers are added by `routeSchema`.
   */
  responses: Record<number, [string, (JsonSchema | TSchema)?]>;
}

const errorBody: JsonSchema = {
  type: "object",
  description: 'Ferry\'s error contract: `{"error": "invalid <field>: …"}`, naming the field (docs/errors.md)',
  properties: { error: { type: "string" } },
  required: ["error"],
};

/** A query value: one string, or several when the key is repeated. */
const queryValue = (description: string): JsonSchema => ({
  description,
  anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
});

const ERRORS_BY_AUTH: Record<Auth, Record<number, string>> = {
  token: {
    400: "Invalid input (the message names the field)",
    401: "Missing or unknown token",
    403: "Forbidden (e.g. a read-only token on a write)",
    429: "Rate limited",
    500: "Internal error",
    503: "Storage unavailable, retry shortly",
  },
  basic: {
    400: "Invalid input (the message names the field)",
    401: "Missing or wrong e-mail:api_key",
    500: "Internal error",
    503: "Storage unavailable, retry shortly",
  },
  index: {
    400: "Invalid input",
    401: "Missing or wrong index token",
    403: "The read-only token cannot write",
    404: "No such index",
    500: "Internal error",
    503: "Storage unavailable, retry shortly",
  },
  metrics: { 401: "FERRY_METRICS_TOKEN is set and was not sent as a Bearer token" },
  none: {},
};

export const SECURITY: Record<Auth, Record<string, string[]>[] | undefined> = {
  token: [{ bearer: [] }],
  basic: [{ basic: [] }],
  index: [{ bearer: [] }],
  metrics: [{ bearer: [] }, {}],
  none: [],
};

/** The Fastify route schema (validation + OpenAPI) of a declaration. */
export function routeSchema(doc: RouteDoc): JsonSchema {
  const schema: JsonSchema = {
    summary: doc.summary,
    tags: [doc.tag],
    security: SECURITY[doc.auth],
  };
  if (doc.description) schema.description = doc.description;
  if (doc.params) {
    schema.params = {
      type: "object",
      properties: Object.fromEntries(
        Object.entries(doc.params).map(([name, description]) => [name, { type: "string", description }]),
      ),
      required: Object.keys(doc.params),
    };
  }
  if (doc.query) {
    schema.querystring = {
      type: "object",
      properties: Object.fromEntries(Object.entries(doc.query).map(([k, d]) => [k, queryValue(d)])),
    };
  }
  if (doc.headers) {
    schema.headers = {
      type: "object",
      properties: Object.fromEntries(
        Object.entries(doc.headers).map(([k, description]) => [k, { type: "string", description }]),
      ),
    };
  }
  if (doc.body === "raw") {
    schema.body = { description: "The payload, forwarded byte for byte with its Content-Type" };
    schema.consumes = ["*/*"];
  } else if (doc.body) {
    schema.body = doc.body;
    schema.consumes = ["application/json"];
  }
  const responses: Record<string, JsonSchema> = {};
  for (const [status, [description, body]] of Object.entries(doc.responses)) {
    responses[status] = body ? { description, ...(body as JsonSchema) } : { description, type: "null" };
  }
  for (const [status, description] of Object.entries(ERRORS_BY_AUTH[doc.auth])) {
    responses[status] ??= { ...errorBody, description };
  }
  schema.response = responses;
  return schema;
}
