import type { FastifyInstance } from "fastify";

/**
 * One `debug` line per answered request (docs/operations.md, "Logs"): method, path, status and duration. Off at the
 * default level (`info`), where a busy node would write a line per publish. The path is logged without its query
 * string, which may carry the token (`svc_token`); headers and bodies are never logged.
 */
const isDebug = (level: string) => level === "debug" || level === "trace";

export function logRequests(app: FastifyInstance): void {
  app.addHook("onResponse", async (request, reply) => {
    if (!isDebug(request.log.level)) return;
    const query = request.url.indexOf("?");
    request.log.debug(
      {
        method: request.method,
        path: query < 0 ? request.url : request.url.slice(0, query),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      "request",
    );
  });
}
