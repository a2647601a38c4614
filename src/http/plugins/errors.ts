import type { FastifyError, FastifyInstance } from "fastify";
import { AppError, isStorageFull, storageFull } from "../../errors.js";

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
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      const message =
        error.code === "FST_ERR_CTP_BODY_TOO_LARGE" ? "invalid body: request body is too large" : error.message;
      return reply.status(status).send({ error: message });
    }
    if (isStorageFull(error)) {
      request.log.warn({ err: error }, "storage is full: request refused");
      const full = storageFull();
      for (const [name, value] of Object.entries(full.headers)) reply.header(name, value);
      return reply.status(full.status).send({ error: full.message });
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
