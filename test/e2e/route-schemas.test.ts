import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registeredRoutes, responseWriting } from "../../src/http/openapi/plugin.js";
import { consoleAssetsBuilt } from "../../src/http/routes/console.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Every route's 2xx answer is serialized through its wire shape (src/http/schemas/, docs/architecture.md "Wire
 * shapes"): a route whose declaration has no typed 2xx body fails here unless it is listed below with its reason.
 */

/** Answers that are not JSON documents of Ferry's own: no wire shape applies. */
const NOT_JSON: Record<string, string> = {
  "GET /openapi.json": "the OpenAPI document itself, written by @fastify/swagger",
  "GET /metrics": "Prometheus text",
  "GET /": "a redirect to the console",
  "GET /console": "a redirect to /console/",
  "GET /console/*": "the console's static files",
};

describe("route response schemas", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ store: "sqlite" });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("serializes every route's 2xx answer through its wire shape", () => {
    const writing = responseWriting(server.ferry.app);
    const routes = registeredRoutes(server.ferry.app);
    expect(routes.length).toBeGreaterThan(50);
    const untyped = routes.filter((r) => writing.get(r) !== "typed" && !(r in NOT_JSON));
    expect(untyped, "routes without a typed 2xx schema (src/http/schemas/)").toEqual([]);
  });

  it("exempts only routes that exist and answer no typed JSON", () => {
    const writing = responseWriting(server.ferry.app);
    // Once the console is built, its assets are served by @fastify/static's own (hidden) route instead of Ferry's
    // `GET /console/*` (src/http/routes/console.ts).
    const notJson = Object.keys(NOT_JSON).filter((r) => r !== "GET /console/*" || !consoleAssetsBuilt());
    expect(notJson.filter((r) => !writing.has(r)), "not registered any more").toEqual([]);
    expect(notJson.filter((r) => writing.get(r) === "typed"), "typed: remove them from NOT_JSON").toEqual([]);
  });
});
