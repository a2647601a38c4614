import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyHttpOptions, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.js";
import type { PlanBook } from "../domain/plans.js";
import { countedBody, DISCARD_SLACK_BYTES, discardRest, messageTooLarge } from "./body-discard.js";
import { quoted } from "../errors.js";

/**
 * What the server accepts from a client before it cuts the request off (docs/reliability.md, "Ingress limits").
 * Every cut-off answers a status and `{"error": "..."}` naming the limit, then closes that connection only.
 */
/** Request line plus headers (Node's default, named here so the docs and the error message agree). */
export const MAX_HEADER_BYTES = 16 * 1024;
/** How often Node looks for connections past headersTimeout/requestTimeout: the cut-off comes at most this late. */
export const TIMEOUT_CHECK_INTERVAL_MS = 1000;

type IngressConfig = Pick<Config, "headersTimeoutMs" | "requestTimeoutMs" | "maxConnections">;

/**
 * The Node server with every limit that belongs to the socket, not to a route: header size and timeouts, the
 * connection cap, and answers to what the parser refuses. src/http/boot-listener.ts creates it before the app exists
 * (the app is then built on it), so the limits hold from the first connection on.
 */
export function createIngressServer(
  config: IngressConfig,
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Server {
  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      // Node answers a request without Host with a bare 400 and no body; Ferry never reads Host, so it answers it.
      requireHostHeader: false,
    },
    handler,
  );
  server.requestTimeout = config.requestTimeoutMs;
  // Must stay below requestTimeout (Node checks both on the same interval).
  server.headersTimeout = Math.min(config.headersTimeoutMs, config.requestTimeoutMs || config.headersTimeoutMs);
  // An idle keep-alive connection is closed after 72 s (Fastify's default, above common load balancers' 60 s).
  server.keepAliveTimeout = 72_000;
  // Every header is honoured (docs/reliability.md "Ingress limits"): Node's default drops those past about the 1,000th
  // without a word, so a `Delay` after 997 others was ignored. Their count needs no limit of its own: the 16 KiB of
  // MAX_HEADER_BYTES already bound it (at most about 4,000), and beyond that the request is a 431.
  server.maxHeadersCount = 0;
  server.on("clientError", (error: Error & { code?: string }, socket: Socket) => answerClientError(error, socket, config));
  limitConnections(server, config.maxConnections);
  return server;
}

/**
 * Fastify options of an app built on a server from createIngressServer: that server's own limits and client-error
 * answers apply, so Fastify's are switched off here.
 */
export function ingressServerOptions(
  serverFactory: (handler: (request: IncomingMessage, response: ServerResponse) => void) => Server,
): FastifyHttpOptions<Server> {
  return {
    serverFactory,
    // Fastify adds this listener beside the server's own (createIngressServer), which answers.
    clientErrorHandler: () => {},
    // A path the router cannot decode (`%C0%AF`, a lone `%`) is bad input, named like any other.
    frameworkErrors: (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split("?")[0]!;
      const problem = error.code === "FST_ERR_BAD_URL" ? "is not a valid URL encoding" : error.message;
      void reply.status(400).send({ error: `invalid path: ${quoted(path)} ${problem}` });
    },
  };
}

function answerClientError(error: Error & { code?: string }, socket: Socket, config: IngressConfig): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  let status = 400;
  let message = `invalid request: ${error.code ?? "malformed HTTP"}`;
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    status = 408;
    message = `request timeout: the headers did not arrive within ${config.headersTimeoutMs} ms, or the whole request within ${config.requestTimeoutMs} ms`;
  } else if (error.code === "HPE_HEADER_OVERFLOW") {
    status = 431;
    message = `request line and headers: more than ${MAX_HEADER_BYTES} bytes`;
  }
  // An answer to HEAD carries no body (RFC 9110 §9.3.2); the packet being parsed tells the method.
  const head = (error as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString("latin1") === "HEAD ";
  write(socket, status, message, "", head);
}

const reasons: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
};

function write(socket: Socket, status: number, message: string, extra = "", headOnly = false): void {
  const body = JSON.stringify({ error: message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reasons[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `${extra}Connection: close\r\n\r\n${headOnly ? "" : body}`,
    );
  }
  socket.destroySoon();
}

/**
 * At most `max` connections at once. A connection over the cap is answered 503 with `Retry-After: 1` and closed
 * before any HTTP handling (Node's own `maxConnections` would drop it without a word).
 */
function limitConnections(server: Server, max: number): void {
  const handlers = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  let open = 0;
  server.on("connection", (socket: Socket) => {
    if (open >= max) {
      socket.on("error", () => {});
      write(socket, 503, `too many connections: the server allows ${max} at once, retry shortly`, "Retry-After: 1\r\n");
      return;
    }
    open++;
    socket.once("close", () => open--);
    for (const handler of handlers) handler.call(server, socket);
  });
}

/** Routes whose body is one message, bounded by the account's plan (`max_message_size`). */
const ONE_MESSAGE_ROUTES = /^\/v2\/(publish|enqueue|schedules)\//i;

/**
 * A message body larger than the plan's `max_message_size` is refused with a 413 as soon as that is known: when
 * announced (Content-Length), before it is read, however slowly it is sent; without a length (chunked), when the
 * bytes counted as they arrive pass the limit, never buffering more. The rest is read and discarded up to a bound so
 * that the client can read the 413 (src/http/body-discard.ts); a body announced beyond that bound is not read at all,
 * and its connection closes after the answer.
 */
export function refuseOversizedMessages(messaging: FastifyInstance, plans: PlanBook): void {
  messaging.addHook("preParsing", async (request, reply, payload) => {
    if (!ONE_MESSAGE_ROUTES.test(request.url)) return payload;
    const max = plans.limitsOf(request.account).max_message_size;
    const length = request.headers["content-length"];
    if (length === undefined) return countedBody(request.raw, reply.raw, payload, max);
    const announced = Number(length);
    if (!(announced > max)) return payload;
    const bound = max + DISCARD_SLACK_BYTES;
    if (announced <= bound) {
      discardRest(request.raw, reply.raw, 0, bound);
      throw messageTooLarge(`${announced} bytes`, max);
    }
    // Not worth reading: the connection closes after the answer.
    throw messageTooLarge(`${announced} bytes`, max, { Connection: "close" });
  });
}
