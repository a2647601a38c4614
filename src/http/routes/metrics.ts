import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { AppError } from "../../errors.js";
import { httpDuration, httpRequests } from "../../metrics/metrics.js";
import { MetricsScraper } from "../metrics-scrape.js";
import type { Services } from "../../services/context.js";

/** Requests that matched no route share one label value, so a scanner cannot grow the series count. */
const UNMATCHED = "unmatched";

/**
 * `GET /metrics` (Prometheus text format, docs/metrics.md), behind `FERRY_METRICS_TOKEN` as a Bearer token when it
 * is set, and the HTTP request metrics of every route (labelled by route template, never by URL).
 */
export function metricsRoutes(app: FastifyInstance, services: Services): void {
  const scraper = new MetricsScraper(services.store, () => services.clock.now());
  const expected = services.config.metricsToken;

  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    const label = reply.statusCode === 404 && request.routeOptions.url === undefined ? UNMATCHED : route;
    httpRequests.inc({ route: label, method: request.method, status: String(reply.statusCode) });
    httpDuration.observe({ route: label }, reply.elapsedTime / 1000);
  });

  // In a scope of its own, like every route: registered once the OpenAPI plugin listens (openapi/plugin.ts).
  app.register(async (scope) => {
    scope.get("/metrics", async (request, reply) => {
      if (expected !== undefined && !bearerMatches(request.headers.authorization, expected)) {
        throw new AppError("unauthorized", "invalid authorization: /metrics requires the FERRY_METRICS_TOKEN bearer token");
      }
      const text = await scraper.render();
      return reply.header("content-type", scraper.contentType).send(text);
    });
  });
}

function bearerMatches(header: string | undefined, expected: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? "");
  if (!match) return false;
  const given = Buffer.from(match[1]!.trim());
  const want = Buffer.from(expected);
  return given.length === want.length && timingSafeEqual(given, want);
}
