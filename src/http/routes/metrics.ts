import type { FastifyInstance } from "fastify";
import { httpDuration, httpRequests } from "../../metrics/metrics.js";
import { MetricsScraper } from "../metrics-scrape.js";
import { requireBearerSecret } from "../plugins/auth.js";
import type { Services } from "../../services/context.js";

/** Requests that matched no route share one label value, so a scanner cannot grow the series count. */
const UNMATCHED = "unmatched";

/**
 * `GET /metrics` (Prometheus text format, docs/metrics.md), behind `FERRY_METRICS_TOKEN` as a Bearer token when it
 * is set, and the HTTP request metrics of every route (labelled by route template, never by URL).
 */
export function metricsRoutes(app: FastifyInstance, services: Services): void {
  const scraper = new MetricsScraper(services.store, () => services.clock.now());

  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    const label = reply.statusCode === 404 && request.routeOptions.url === undefined ? UNMATCHED : route;
    httpRequests.inc({ route: label, method: request.method, status: String(reply.statusCode) });
    httpDuration.observe({ route: label }, reply.elapsedTime / 1000);
  });

  // In a scope of its own, like every route: registered once the OpenAPI plugin listens (openapi/plugin.ts).
  app.register(async (scope) => {
    requireBearerSecret(
      scope,
      services.config.metricsToken,
      "invalid authorization: /metrics requires the FERRY_METRICS_TOKEN bearer token",
    );
    scope.get("/metrics", async (_request, reply) => {
      const text = await scraper.render();
      return reply.header("content-type", scraper.contentType).send(text);
    });
  });
}
