import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { logRequests } from "./http/plugins/request-log.js";
import { type MessagingRoute, requireMessagingToken } from "./http/plugins/auth.js";
import { requireCustomer } from "./http/plugins/basic-auth.js";
import { ingressServerOptions, refuseOversizedMessages } from "./http/ingress-limits.js";
import { registerErrorHandling } from "./http/plugins/errors.js";
import { decideDialects } from "./http/plugins/dialect.js";
import { dlqRoutes } from "./http/routes/dlq.js";
import { workflowDlqRoutes, workflowHookRoutes, workflowRoutes } from "./http/routes/workflows.js";
import { batchRoutes } from "./http/routes/batch.js";
import { accountRoutes } from "./http/routes/account.js";
import { healthRoutes } from "./http/routes/health.js";
import { consoleRoutes } from "./http/routes/console.js";
import { flowControlRoutes } from "./http/routes/flow-keys.js";
import { limitMessagingBursts } from "./http/plugins/rate-limit.js";
import { keyRoutes } from "./http/routes/keys.js";
import { logRoutes } from "./http/routes/logs.js";
import { managementAccountRoutes } from "./http/routes/management-accounts.js";
import { messageRoutes } from "./http/routes/messages.js";
import { messageActionRoutes } from "./http/routes/message-actions.js";
import { publishRoutes } from "./http/routes/publish.js";
import { scheduleRoutes } from "./http/routes/schedules.js";
import { queueRoutes } from "./http/routes/queues.js";
import { urlGroupRoutes } from "./http/routes/url-groups.js";
import { searchRoutes } from "./http/routes/search.js";
import { searchDataRoutes } from "./http/routes/search-data.js";
import { metricsRoutes } from "./http/routes/metrics.js";
import { readinessRoutes } from "./http/routes/readiness.js";
import { registerOpenApi } from "./http/openapi/plugin.js";
import { lazySerializers } from "./http/lazy-serializers.js";
import type { Services } from "./services/context.js";
import type { Listener } from "./http/boot-listener.js";

/** Largest request body accepted at the HTTP layer; each account's max_message_size is enforced after auth. */
const BODY_LIMIT = 100 * 1024 * 1024;

/**
 * Builds the Fastify app (both APIs on one port) on the listener's server, which already listens
 * (src/http/boot-listener.ts): the app never listens by itself; server.ts hands it the requests once it is ready.
 */
export function buildApp(services: Services, listener: Pick<Listener, "factory">): FastifyInstance {
  const app = Fastify({
    ...ingressServerOptions(listener.factory),
    loggerInstance: services.log as FastifyBaseLogger,
    // Fastify's own request logs (info, every header-bearing request object): off. One concise line per request at
    // debug instead (http/plugins/request-log.ts); errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    // The Go SDK calls /v2/Schedules; docs use trailing slashes (docs/messaging.md "Wire conventions").
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: 8192 },
    trustProxy: false,
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
  });
  registerErrorHandling(app);
  // Before every scope: auth reads the token parameter of the request's dialect.
  decideDialects(app, services);

  // Publish bodies are forwarded byte for byte, whatever their type: every body is read as a Buffer.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
  // One debug line per answered request (http/plugins/request-log.ts).
  logRequests(app);

  // First: every route registered after it is described in the OpenAPI document (GET /openapi.json, /docs).
  registerOpenApi(app, services);
  // Before the API scopes: its request-metrics hook must reach their routes too.
  metricsRoutes(app, services);
  app.register(async (operations) => readinessRoutes(operations, services));

  app.decorate("messagingRoutes", [] as MessagingRoute[]);
  app.register(async (messaging) => {
    requireMessagingToken(messaging, services);
    refuseOversizedMessages(messaging, services.plans);
    limitMessagingBursts(messaging, services);
    publishRoutes(messaging, services);
    messageRoutes(messaging, services);
    messageActionRoutes(messaging, services);
    logRoutes(messaging, services);
    keyRoutes(messaging, services);
    dlqRoutes(messaging, services);
    scheduleRoutes(messaging, services);
    urlGroupRoutes(messaging, services);
    queueRoutes(messaging, services);
    batchRoutes(messaging, services);
    flowControlRoutes(messaging, services);
    accountRoutes(messaging, services);
    healthRoutes(messaging, services);
    workflowRoutes(messaging, services);
    workflowDlqRoutes(messaging, services);
  });
  // Webhook URLs are called by third parties without a token (docs/workflows.md "Webhooks").
  app.register(async (hooks) => workflowHookRoutes(hooks, services));

  // Management API: HTTP Basic (customer e-mail and API key), its own scope so Bearer tokens never reach it.
  app.register(async (management) => {
    requireCustomer(management, services);
    managementAccountRoutes(management, services);
    searchRoutes(management, services);
  });

  // Search data plane: each index's endpoint, with the index's own tokens (docs/search.md).
  app.register(async (search) => searchDataRoutes(search, services), { prefix: "/search" });
  // The web console (docs/console.md): public assets in a scope of their own with its security headers.
  app.register(async (consolePages) => consoleRoutes(consolePages, services));
  return app;
}
