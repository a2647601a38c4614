import type { FastifyError, FastifyInstance, FastifyReply } from "fastify";
import { AppError, errorCatalog, isStorageFull, notFound, quoted, storageFull } from "../../errors.js";
import { DISCARD_SLACK_BYTES, discardRest } from "../body-discard.js";
import { RouteMethods } from "../route-methods.js";

/** The JSON body of an error answer, from its message and status. */
export type ErrorBody = (message: string, status: number) => Record<string, unknown>;

/** Messaging and management APIs: `{"error": "<message naming the field>"}` (docs/errors.md). */
export const messageOnly: ErrorBody = (message) => ({ error: message });

/**
 * One error contract for every API, in the scope it is registered in: the body `errorBody` makes of the message and
 * status (`{"error": …}`, or the search data plane's `{"error": …, "status": N}`: shared docs/search-api.md).
 * Fastify's own 4xx errors (body too large, bad content) keep their status; anything unexpected is logged with its
 * cause and answered as a bare 500. Unknown routes are 404, known paths with another method 405.
 */
export function registerErrorHandling(app: FastifyInstance, errorBody: ErrorBody = messageOnly): void {
  const send = (reply: FastifyReply, status: number, message: string) =>
    reply.status(status).send(errorBody(message, status));
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof AppError) {
      // A 413 whose body is being discarded (src/http/body-discard.ts) keeps its connection until the discard ends;
      // Fastify asks for a close after a failed body read, which would reset a client still sending.
      if (error.code === "payload_too_large" && !("Connection" in error.headers)) reply.removeHeader("connection");
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return send(reply, error.status, error.message);
    }
    if (error.validation) return send(reply, 400, validationMessage(error));
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
        // Above the server's body limit: discarded up to a bound like a message above its plan's (body-discard.ts).
        reply.removeHeader("connection");
        discardRest(request.raw, reply.raw, 0, DISCARD_SLACK_BYTES);
      }
      const message =
        error.code === "FST_ERR_CTP_BODY_TOO_LARGE"
          ? "invalid body: request body is too large"
          : error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE"
            ? `invalid Content-Type: ${quoted(String(request.headers["content-type"] ?? ""))} is not a media type`
            : error.message;
      // Only catalog statuses go out (docs/errors.md); any other client error of Fastify's is bad input.
      return send(reply, knownStatus(status), message);
    }
    if (isStorageFull(error)) {
      request.log.warn({ err: error }, "storage is full: request refused");
      const full = storageFull();
      for (const [name, value] of Object.entries(full.headers)) reply.header(name, value);
      return send(reply, full.status, full.message);
    }
    if ((error as { unavailable?: boolean }).unavailable) {
      return send(reply, errorCatalog.unavailable, "storage unavailable, retry shortly");
    }
    request.log.error({ err: error }, "unhandled error");
    return send(reply, errorCatalog.internal, "internal error");
  });
  // A known path called with a method it does not serve is a 405 naming the methods it does (Allow header).
  const routeMethods = new RouteMethods();
  app.addHook("onRoute", (route) => routeMethods.add(route.method, route.url));
  app.setNotFoundHandler(async (request) => {
    const path = request.url.split("?")[0]!;
    const allow = routeMethods.allowed(path);
    // A route that serves this method may still hand the request on (e.g. `/` redirects browsers only): not a 405.
    if (allow.length === 0 || allow.includes(request.method)) throw notFound(`route ${request.method} ${path}`);
    const methods = allow.join(", ");
    throw new AppError("method_not_allowed", `method ${request.method} not allowed on ${path}: use ${methods}`, {
      Allow: methods,
    });
  });
}

/**
 * A route-schema validation failure (openapi/route-doc.ts) in the same contract as the handlers' own checks:
 * `invalid <field>: <problem>`, the field being the query key, path parameter or header that failed.
 */
function validationMessage(error: FastifyError): string {
  const first = error.validation![0]!;
  const missing = (first.params as { missingProperty?: string }).missingProperty;
  const path = first.instancePath.split("/").filter((p) => p !== "");
  const field = missing ?? path[0] ?? error.validationContext ?? "request";
  return missing ? `invalid ${field}: is required` : `invalid ${field}: ${first.message ?? "is not valid"}`;
}

const catalogStatuses = new Set<number>(Object.values(errorCatalog));
const knownStatus = (status: number): number =>
  catalogStatuses.has(status) ? status : errorCatalog.invalid_input;
