import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { FERRY_DEFAULT_PLAN: "free" } });
});
afterAll(async () => {
  await server.stop();
});

const target = "http://127.0.0.1:9/never";

/** Each rejected input gets a 4xx whose message names the offending field; never a 5xx. */
const cases: {
  name: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  status: number;
  field: string;
}[] = [
  { name: "bad duration", headers: { "svc-delay": "ten seconds" }, status: 400, field: "Svc-Delay" },
  { name: "negative delay", headers: { "svc-delay": "-5s" }, status: 400, field: "Svc-Delay" },
  { name: "delay above max_delay", headers: { "svc-delay": "30d" }, status: 400, field: "Svc-Delay" },
  { name: "negative retries", headers: { "svc-retries": "-1" }, status: 400, field: "Svc-Retries" },
  { name: "retries not a number", headers: { "svc-retries": "many" }, status: 400, field: "Svc-Retries" },
  { name: "retries above max_retries", headers: { "svc-retries": "50" }, status: 400, field: "Svc-Retries" },
  { name: "bad expression", headers: { "svc-retry-delay": "1000 * (" }, status: 400, field: "Svc-Retry-Delay" },
  {
    name: "unknown identifier",
    headers: { "svc-retry-delay": "attempts * 10" },
    status: 400,
    field: "Svc-Retry-Delay",
  },
  { name: "unknown method", headers: { "svc-method": "FETCH" }, status: 400, field: "Svc-Method" },
  { name: "bad timeout", headers: { "svc-timeout": "soon" }, status: 400, field: "Svc-Timeout" },
  { name: "bad not-before", headers: { "svc-not-before": "tomorrow" }, status: 400, field: "Svc-Not-Before" },
  {
    name: "bad boolean",
    headers: { "svc-content-based-deduplication": "yes" },
    status: 400,
    field: "Svc-Content-Based-Deduplication",
  },
  { name: "bad header-forward", headers: { "svc-header-forward": "maybe" }, status: 400, field: "Svc-Header-Forward" },
  { name: "bad redact fields", headers: { "svc-redact-fields": "password" }, status: 400, field: "Svc-Redact-Fields" },
  { name: "bad callback url", headers: { "svc-callback": "not a url" }, status: 400, field: "Svc-Callback" },
  {
    name: "delayed callback",
    headers: { "svc-callback": target, "svc-callback-delay": "10s" },
    status: 400,
    field: "Svc-Callback-Delay",
  },
  {
    name: "flow value without key",
    headers: { "svc-flow-control-value": "rate=1" },
    status: 400,
    field: "Svc-Flow-Control-Key",
  },
  {
    name: "bad flow value",
    headers: { "svc-flow-control-key": "k", "svc-flow-control-value": "speed=9" },
    status: 400,
    field: "Svc-Flow-Control-Value",
  },
  { name: "bad query config", path: `/v2/publish/${target}?svc-retries=x`, status: 400, field: "Svc-Retries" },
  { name: "destination without scheme", path: "/v2/publish/example.com/hook", status: 400, field: "destination" },
  { name: "destination with bad scheme", path: "/v2/publish/ftp://example.com/x", status: 400, field: "destination" },
  { name: "unknown url group", path: "/v2/publish/no-such-group", status: 404, field: "no-such-group" },
  { name: "oversized body", body: Buffer.alloc(1024 * 1024 + 1, 97), status: 413, field: "max_message_size" },
];

describe("bad input on publish", () => {
  for (const c of cases) {
    it(`${c.name} → ${c.status} naming ${c.field}`, async () => {
      const res = await server.call("POST", c.path ?? `/v2/publish/${target}`, {
        headers: c.headers ?? {},
        body: c.body ?? "x",
      });
      expect(res.status).toBe(c.status);
      expect(res.json.error).toContain(c.field);
    });
  }

  it("an unknown route is a JSON 404, a non-JSON bulk body a 400", async () => {
    const res = await server.call("GET", "/v2/nothing-here");
    expect(res.status).toBe(404);
    expect(typeof res.json.error).toBe("string");
    const bad = await server.call("DELETE", "/v2/messages", {
      headers: { "content-type": "application/json" },
      body: "{oops",
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("body");
  });

  it("a JSON filter field with an empty or blank name is named in the 400 (found by the fuzzer)", async () => {
    for (const [method, path] of [
      ["POST", "/v2/dlq/retry"],
      ["DELETE", "/v2/messages"],
    ] as const) {
      const res = await server.call(method, path, {
        headers: { "content-type": "application/json" },
        body: '{"": {}}',
      });
      expect(res.status, path).toBe(400);
      expect(res.json.error, path).toBe('invalid body field "": must be a string, a number or an array of them');
    }
    const blank = await server.call("POST", "/v2/dlq/retry", {
      headers: { "content-type": "application/json" },
      body: '{" ": ""}',
    });
    expect(blank.status).toBe(400);
    expect(blank.json.error).toBe('invalid query parameter " ": unknown query parameter');
  });

  it("accepts no body and no content type", async () => {
    const res = await server.call("POST", `/v2/publish/${target}`, { headers: { "svc-delay": "1d" } });
    expect(res.status).toBe(200);
  });
});
