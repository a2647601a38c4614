import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import type { Config } from "../config.js";
import { errorCatalog } from "../errors.js";

/**
 * Answers on the configured port while the store opens and migrates (which may take a while: a PostgreSQL that is
 * still coming up is waited for): `/health` 200, `/ready` and everything else 503. Probes see "starting" instead of
 * a refused connection. Closed right before the real app listens on the same port.
 */
export async function bootListener(config: Config): Promise<{ port: number; close(): Promise<void> }> {
  const boot = Fastify({ logger: false });
  boot.get("/health", async () => ({ status: "ok" }));
  boot.get("/ready", async (_request, reply) => reply.status(errorCatalog.unavailable).send({ status: "unavailable", reason: "starting" }));
  boot.setNotFoundHandler((_request, reply) => reply.status(errorCatalog.unavailable).send({ error: "starting, retry shortly" }));
  await boot.listen({ port: config.port, host: config.host });
  return { port: (boot.server.address() as AddressInfo).port, close: () => boot.close() };
}
