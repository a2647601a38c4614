import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError, notFound } from "../../errors.js";
import type { Services } from "../../services/context.js";
import type { ServerConfig } from "../schemas/operations.js";

/**
 * The console's page may load only what Ferry itself serves: no inline script, no other origin (docs/console.md).
 * Styles set through the DOM (element.style) are not inline styles in CSP's sense and stay allowed.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
};

/** The repository root: the nearest folder above this file with a package.json (works from src/ and a build). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("package.json not found above " + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

/** Where `npm run build:console` writes the single-page app (git-ignored). */
export const consoleAssetsDir = (): string => join(packageRoot(), "console", "dist");

export function consoleAssetsBuilt(): boolean {
  return existsSync(join(consoleAssetsDir(), "index.html"));
}

const MISSING =
  "the console's assets are not built: run `npm run build:console` (npm ci runs it through `prepare`), then restart";

const wantsHtml = (request: FastifyRequest) => (request.headers.accept ?? "").includes("text/html");

/**
 * The web console under /console (docs/console.md): the built assets, the dialect's names for the page to use, and
 * `/` redirecting a browser there. Every answer of this scope carries the security headers.
 */
export function consoleRoutes(app: FastifyInstance, services: Services): void {
  app.addHook("onSend", async (_request, reply: FastifyReply) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
  });

  // Public and secret-free: which header prefix, token query key and management path segment the page speaks (the
  // default dialect, FERRY_DIALECT; the server understands both), so the page never hard-codes a dialect.
  app.get("/console/config.json", async (_request, reply): Promise<ServerConfig> => {
    reply.header("cache-control", "no-cache");
    const dialect = services.dialects.default;
    return {
      dialect: dialect.name,
      headerPrefix: dialect.prefix,
      tokenQuery: dialect.tokenQuery,
      managementSegment: dialect.managementSegment,
      fixedPlanPrefix: dialect.fixedPlanPrefix,
      version: services.version,
    };
  });

  // Only a browser is sent on; an API client asking for / gets the same 404 as before the console existed.
  app.get("/", async (request, reply) => {
    if (!wantsHtml(request)) throw notFound(`route ${request.method} /`);
    return reply.redirect("/console/", 302);
  });

  if (!consoleAssetsBuilt()) {
    services.log.warn(`console assets missing in ${consoleAssetsDir()}: run npm run build:console (npm ci does)`);
    const missing = async () => {
      throw new AppError("unavailable", MISSING);
    };
    app.get("/console", missing);
    app.get("/console/*", missing);
    return;
  }

  app.register(fastifyStatic, {
    root: consoleAssetsDir(),
    prefix: "/console/",
    index: false,
    setHeaders: (reply, path) => {
      // Vite names assets by content hash: they never change; the page itself is checked on every load.
      reply.header("cache-control", path.includes("/assets/") ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
  // The page itself: `/console` and `/console/` (the router ignores trailing slashes); views live in the fragment.
  app.get("/console", async (_request, reply) => reply.header("cache-control", "no-cache").sendFile("index.html"));
}
