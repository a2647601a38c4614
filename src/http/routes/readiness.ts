import type { FastifyInstance } from "fastify";
import type { Services } from "../../services/context.js";
import { errorCatalog } from "../../errors.js";
import { timerDelay } from "../../domain/timers.js";
import type { Liveness, Ready } from "../schemas/operations.js";

/** How long /ready waits for the store before it answers 503 (a load balancer's probe must not hang). */
const STORE_PROBE_TIMEOUT_MS = 2000;

type Readiness = { ready: true } | { ready: false; reason: string };

/**
 * `GET /ready`: 200 only when the store answers, this build's migrations are applied and the node is not draining;
 * 503 `{"status": "unavailable", "reason": …}` otherwise. `GET /health` stays the liveness check: it never touches
 * the store (docs/operations.md).
 */
export function readinessRoutes(app: FastifyInstance, services: Services): void {
  app.get("/health", async (): Promise<Liveness> => ({ status: "ok" }));

  app.get("/ready", async (_request, reply) => {
    const result = await readiness(services);
    if (result.ready) return { status: "ready" } satisfies Ready;
    return reply.status(errorCatalog.unavailable).send({ status: "unavailable", reason: result.reason });
  });
}

async function readiness(services: Services): Promise<Readiness> {
  const phase = services.lifecycle.state;
  if (phase === "draining") return { ready: false, reason: "draining: the node is shutting down" };
  if (phase === "starting") return { ready: false, reason: "starting" };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timerDelay(STORE_PROBE_TIMEOUT_MS));
  });
  try {
    const answer = await Promise.race([services.store.opsReadiness(), timeout]);
    if (answer === "timeout") return { ready: false, reason: `store: no answer within ${STORE_PROBE_TIMEOUT_MS} ms` };
    if (answer.pendingMigrations.length > 0) {
      return { ready: false, reason: `store: migrations not applied: ${answer.pendingMigrations.join(", ")}` };
    }
    return { ready: true };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { ready: false, reason: `store: unavailable${typeof code === "string" ? ` (${code})` : ""}` };
  } finally {
    clearTimeout(timer);
  }
}
