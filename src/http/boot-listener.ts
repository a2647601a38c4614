import { lookup } from "node:dns/promises";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "../config.js";
import { errorCatalog } from "../errors.js";
import { createIngressServer } from "./ingress-limits.js";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** What a client is told while the store opens: when to come back (seconds). */
export const STARTING_RETRY_AFTER_S = 1;

/**
 * The one listener of the process, from the first accepted connection to the last (docs/operations.md, "Start").
 * While the store opens and migrates, every request (`/health` and `/ready` included) answers 503 with
 * `{"error": …}` and `Retry-After`; `serve(app)` then hands the same sockets to the app. Nothing is closed or
 * re-bound in between, so no request meets a reset or a refused connection during start-up (an earlier boot listener
 * was closed before the app listened: clients saw ECONNRESET, ECONNREFUSED and Fastify's bare 503).
 */
export interface Listener {
  /** The primary server. */
  server: Server;
  /** Fastify's `serverFactory`: the app is built on the primary server, and its handler kept for `serve()`. */
  factory: (handler: Handler) => Server;
  port: number;
  /** Base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  /** From now on requests go to the app's handler; the switch happens between two requests, never within one. */
  serve(): void;
  /** Stops accepting, closes idle connections and waits for the requests being answered. */
  close(): Promise<void>;
}

/** A 503 that says why and when to retry; /health and /ready also carry their usual `status` and `reason`. */
function answerStarting(request: IncomingMessage, response: ServerResponse): void {
  // The body is not read: discard it so the connection stays usable for the retry.
  request.resume();
  const path = (request.url ?? "").split("?")[0]!.toLowerCase().replace(/\/+$/, "");
  const error = "Ferry is starting (opening the store), retry shortly";
  const probe = path === "/health" || path === "/ready" ? { status: "unavailable", reason: "starting" } : {};
  const body = JSON.stringify({ ...probe, error });
  response.writeHead(errorCatalog.unavailable, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "retry-after": String(STARTING_RETRY_AFTER_S),
  });
  response.end(body);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * Listens on `FERRY_HOST:FERRY_PORT` at once, answering "starting". `localhost` binds every address it resolves to
 * (127.0.0.1 and ::1), as `ferry dev` documents; an address that cannot be bound (no IPv6) is skipped.
 */
export async function openListener(config: Config): Promise<Listener> {
  let current: Handler = answerStarting;
  let app: Handler | undefined;
  const dispatch: Handler = (request, response) => current(request, response);
  const primary = createIngressServer(config, dispatch);
  const servers = [primary];
  const addresses =
    config.host === "localhost" ? (await lookup("localhost", { all: true })).map((a) => a.address) : [config.host];
  await listen(primary, config.port, addresses[0]!);
  const port = (primary.address() as AddressInfo).port;
  for (const address of addresses.slice(1)) {
    const secondary = createIngressServer(config, dispatch);
    try {
      await listen(secondary, port, address);
      servers.push(secondary);
    } catch {
      // Not bindable here (an IPv6 loopback missing): the primary address still serves.
    }
  }
  const bound = (primary.address() as AddressInfo).address;
  const shown = bound === "0.0.0.0" ? "127.0.0.1" : bound === "::" ? "[::1]" : bound.includes(":") ? `[${bound}]` : bound;
  return {
    server: primary,
    port,
    url: `http://${shown}:${port}`,
    factory: (handler) => {
      app = handler;
      return primary;
    },
    serve: () => {
      if (!app) throw new Error("no app was built on this listener");
      current = app;
    },
    close: async () => {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeIdleConnections();
            }),
        ),
      );
    },
  };
}
