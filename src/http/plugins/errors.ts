import type { FastifyError, FastifyInstance } from "fastify";
import { AppError } from "../../errors.js";

/**
 * One error contract for both APIs: `{"error": "<message naming the field>"}`. Fastify's own 4xx errors (body too
 * large, bad content) keep their status; anything unexpected is logged with its cause and answered as a bare 500.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof AppError) {
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return reply.status(error.status).send({ error: error.message });
    }
    if (error.validation) return reply.status(400).send({ error: validationMessage(error) });
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      const message =
        error.code === "FST_ERR_CTP_BODY_TOO_LARGE" ? "invalid body: request body is too large" : error.message;
      return reply.status(status).send({ error: message });
    }
    if ((error as { unavailable?: boolean }).unavailable) {
      return reply.status(503).send({ error: "storage unavailable, retry shortly" });
    }
    request.log.error({ err: error }, "unhandled error");
    return reply.status(500).send({ error: "internal error" });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ error: `route ${request.method} ${request.url.split("?")[0]} not found` }),
  );
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
